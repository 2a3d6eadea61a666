package observe

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cryptointel/cryptointel/live"
)

// streamCollector exposes the live hub's counters.
type streamCollector struct {
	stats func() live.Stats

	subscribers, buffered, position, pushed, closed *prometheus.Desc
}

// NewStreamCollector returns a collector of the live streams of this
// process (stats is usually live.Hub.Stats): open subscribers, events
// waiting in their buffers, the hub's position, events pushed, and streams
// closed by reason (slow_consumer, shutting_down, quota_exceeded,
// unauthorized, forbidden, unavailable; "client" when the client left).
func NewStreamCollector(stats func() live.Stats) prometheus.Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "stream", name), help, labels, nil)
	}
	return &streamCollector{
		stats:       stats,
		subscribers: d("subscribers", "Open live streams (GraphQL subscriptions and /v1/stream)."),
		buffered:    d("buffered_events", "Events waiting in the streams' buffers."),
		position:    d("position", "The highest ingest_seq the hub has fanned out."),
		pushed:      d("events_pushed_total", "Events handed to streams."),
		closed:      d("closed_total", "Streams closed, by reason.", "reason"),
	}
}

// Describe implements prometheus.Collector.
func (c *streamCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.subscribers, c.buffered, c.position, c.pushed, c.closed} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *streamCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(c.subscribers, prometheus.GaugeValue, float64(s.Subscribers))
	ch <- prometheus.MustNewConstMetric(c.buffered, prometheus.GaugeValue, float64(s.Buffered))
	ch <- prometheus.MustNewConstMetric(c.position, prometheus.GaugeValue, float64(s.Position))
	ch <- prometheus.MustNewConstMetric(c.pushed, prometheus.CounterValue, float64(s.Pushed))
	for reason, n := range s.Closed {
		if reason == "" {
			reason = "client"
		}
		ch <- prometheus.MustNewConstMetric(c.closed, prometheus.CounterValue, float64(n), reason)
	}
}
