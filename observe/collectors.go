package observe

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cryptointel/cryptointel/db"
)

// poolCollector exposes pgxpool.Stat() of one pool.
type poolCollector struct {
	pool *pgxpool.Pool

	acquired, idle, constructing, total, max      *prometheus.Desc
	acquires, acquireSeconds, canceled            *prometheus.Desc
	empty, newConns, lifetimeDestroy, idleDestroy *prometheus.Desc
}

// NewPoolCollector returns a collector of the connection pool's statistics:
// connections acquired, idle, being built, total and the maximum, and
// counters of acquires, time spent acquiring, canceled and waiting acquires,
// new connections and connections closed for age or idleness.
func NewPoolCollector(pool *pgxpool.Pool) prometheus.Collector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "db_pool", name), help, nil, nil)
	}
	return &poolCollector{
		pool:            pool,
		acquired:        d("acquired_connections", "Connections currently checked out of the pool."),
		idle:            d("idle_connections", "Idle connections in the pool."),
		constructing:    d("constructing_connections", "Connections being established."),
		total:           d("total_connections", "Connections in the pool: acquired, idle and being established."),
		max:             d("max_connections", "Maximum size of the pool."),
		acquires:        d("acquires_total", "Successful connection acquires."),
		acquireSeconds:  d("acquire_duration_seconds_total", "Total time spent acquiring connections."),
		canceled:        d("canceled_acquires_total", "Acquires canceled by their context."),
		empty:           d("empty_acquires_total", "Acquires that had to wait because the pool had no idle connection."),
		newConns:        d("new_connections_total", "Connections opened."),
		lifetimeDestroy: d("max_lifetime_destroys_total", "Connections closed because they reached their maximum lifetime."),
		idleDestroy:     d("max_idle_destroys_total", "Connections closed because they were idle too long."),
	}
}

// Describe implements prometheus.Collector.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.constructing, c.total, c.max,
		c.acquires, c.acquireSeconds, c.canceled, c.empty, c.newConns, c.lifetimeDestroy, c.idleDestroy} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.acquired, float64(s.AcquiredConns()))
	gauge(c.idle, float64(s.IdleConns()))
	gauge(c.constructing, float64(s.ConstructingConns()))
	gauge(c.total, float64(s.TotalConns()))
	gauge(c.max, float64(s.MaxConns()))
	counter(c.acquires, float64(s.AcquireCount()))
	counter(c.acquireSeconds, s.AcquireDuration().Seconds())
	counter(c.canceled, float64(s.CanceledAcquireCount()))
	counter(c.empty, float64(s.EmptyAcquireCount()))
	counter(c.newConns, float64(s.NewConnsCount()))
	counter(c.lifetimeDestroy, float64(s.MaxLifetimeDestroyCount()))
	counter(c.idleDestroy, float64(s.MaxIdleDestroyCount()))
}

// QueueDepthReader reads River queue depth: the number of unfinished jobs
// by queue and state. *db.DB implements it.
type QueueDepthReader interface {
	QueueDepths(ctx context.Context) ([]db.QueueDepth, error)
}

// queueCollector exposes River queue depth, read from river_job on each
// scrape.
type queueCollector struct {
	store   QueueDepthReader
	logger  *slog.Logger
	timeout time.Duration
	jobs    *prometheus.Desc
	up      *prometheus.Desc
}

// NewQueueCollector returns a collector of River queue depth: the number of
// unfinished jobs by queue and state (available, pending, retryable,
// running, scheduled), read with one cheap indexed statement per scrape,
// and cryptointel_river_queue_up, 1 when that statement succeeded. Errors
// are logged on logger (slog.Default() when nil), never fail the scrape.
func NewQueueCollector(store QueueDepthReader, logger *slog.Logger) prometheus.Collector {
	if logger == nil {
		logger = slog.Default()
	}
	return &queueCollector{
		store:   store,
		logger:  logger,
		timeout: 2 * time.Second,
		jobs: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "river", "queue_jobs"),
			"Unfinished River jobs by queue and state: the queue depth.", []string{"queue", "state"}, nil),
		up: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "river", "queue_up"),
			"1 when the River queue depth could be read on this scrape, 0 otherwise.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.up
}

// Collect implements prometheus.Collector.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	depths, err := c.store.QueueDepths(ctx)
	if err != nil {
		c.logger.Warn("error reading river queue depth for metrics", slog.String("error", err.Error()))
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	// Report every unfinished state of every queue seen (and of the default
	// queue), zero included, so an emptied queue reads 0 instead of
	// vanishing.
	counts := map[string]map[string]int64{"default": {}}
	for _, d := range depths {
		if counts[d.Queue] == nil {
			counts[d.Queue] = map[string]int64{}
		}
		counts[d.Queue][d.State] = d.Count
	}
	for queue, states := range counts {
		for _, state := range db.UnfinishedJobStates {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(states[state]), queue, state)
		}
	}
}
