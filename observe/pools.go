package observe

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cryptointel/cryptointel/db"
)

// PoolStater reports the state of the database pools (db.DB.PoolStates).
type PoolStater interface {
	PoolStates() []db.PoolState
}

// readPoolsCollector exposes the primary's and the read replicas' state.
type readPoolsCollector struct {
	src PoolStater

	statements, fallbacks, up, state, lag, version *prometheus.Desc
	acquired, total, max                           *prometheus.Desc
}

// poolStates are the values of cryptointel_db_replica_state's state label.
var poolStates = []string{db.PoolUp, db.PoolStarting, db.PoolLagging, db.PoolDown, db.PoolNotStandby}

// NewReadPoolsCollector returns a collector of the read pools, for a
// service started with read replicas (DATABASE_READ_URLS): statements sent
// to each pool (label pool: primary, replica1, …), reads allowed on a
// replica that fell back to the primary, and each replica's state, replay
// lag, replayed content version and connections.
func NewReadPoolsCollector(src PoolStater) prometheus.Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "db", name), help, labels, nil)
	}
	return &readPoolsCollector{
		src:        src,
		statements: d("statements_total", "Statements sent to each database pool.", "pool"),
		fallbacks:  d("replica_fallbacks_total", "Statements allowed on a replica that ran on the primary: no replica up and caught up with the request's content version, or the replica failed them."),
		up:         d("replica_up", "1 when the replica serves reads: reachable, in recovery and within the lag bound.", "pool"),
		state:      d("replica_state", "1 for the replica's current state (up, starting, lagging, down, not_standby), 0 for the others.", "pool", "state"),
		lag:        d("replica_lag_seconds", "The replica's replay lag at its last check (0 when caught up with the primary, -1 when unknown).", "pool"),
		version:    d("replica_data_version", "The content version the replica had replayed at its last check.", "pool"),
		acquired:   d("replica_acquired_connections", "Connections checked out of the replica's pool.", "pool"),
		total:      d("replica_total_connections", "Connections in the replica's pool.", "pool"),
		max:        d("replica_max_connections", "Maximum size of the replica's pool.", "pool"),
	}
}

// Describe implements prometheus.Collector.
func (c *readPoolsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.statements, c.fallbacks, c.up, c.state, c.lag, c.version, c.acquired, c.total, c.max} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *readPoolsCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, p := range c.src.PoolStates() {
		ch <- prometheus.MustNewConstMetric(c.statements, prometheus.CounterValue, float64(p.Statements), p.Name)
		if !p.Replica {
			ch <- prometheus.MustNewConstMetric(c.fallbacks, prometheus.CounterValue, float64(p.Fallbacks))
			continue
		}
		up := 0.0
		if p.State == db.PoolUp {
			up = 1
		}
		gauge(c.up, up, p.Name)
		for _, s := range poolStates {
			v := 0.0
			if s == p.State {
				v = 1
			}
			gauge(c.state, v, p.Name, s)
		}
		gauge(c.lag, p.Lag.Seconds(), p.Name)
		gauge(c.version, float64(p.DataVersion), p.Name)
		if p.Stat != nil {
			gauge(c.acquired, float64(p.Stat.AcquiredConns()), p.Name)
			gauge(c.total, float64(p.Stat.TotalConns()), p.Name)
			gauge(c.max, float64(p.Stat.MaxConns()), p.Name)
		}
	}
}
