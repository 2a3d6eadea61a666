// Package observe is the service's observability: Prometheus metrics served
// at /metrics, the request middleware that assigns request ids and writes
// one structured JSON log line per request, and the counters that jobs,
// webhook delivery and the access layer report into.
//
// The counters and histograms are process-wide (so workers can report with a
// plain function call such as JobOutcome); NewRegistry bundles them with the
// per-database collectors of one service instance.
package observe

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric of the service.
const Namespace = "cryptointel"

// latencyBuckets are the request and delivery latency buckets, in seconds:
// 1 ms to 10 s.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

var (
	httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Subsystem: "http",
		Name:      "requests_total",
		Help:      "HTTP requests served, by method, route pattern and status code.",
	}, []string{"method", "route", "status"})

	httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace,
		Subsystem: "http",
		Name:      "request_duration_seconds",
		Help:      "Time to serve an HTTP request, by method, route pattern and status code.",
		Buckets:   latencyBuckets,
	}, []string{"method", "route", "status"})

	httpInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace,
		Subsystem: "http",
		Name:      "requests_in_flight",
		Help:      "HTTP requests being served right now.",
	})

	graphqlOperations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Subsystem: "graphql",
		Name:      "operations_total",
		Help:      "GraphQL operations, by operation type (query, mutation, subscription, or unknown when the document did not parse or validate) and outcome (ok or error).",
	}, []string{"operation", "outcome"})

	graphqlComplexity = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace,
		Subsystem: "graphql",
		Name:      "operation_complexity",
		Help:      "Complexity of GraphQL operations as gqlgen computes it, by operation type.",
		Buckets:   []float64{1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000},
	}, []string{"operation"})

	jobOutcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Subsystem: "river",
		Name:      "job_outcomes_total",
		Help:      "River jobs worked, by job kind and outcome (for example completed, retried, discarded, cancelled).",
	}, []string{"kind", "outcome"})

	jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace,
		Subsystem: "river",
		Name:      "job_duration_seconds",
		Help:      "Time to work one River job, by job kind and outcome (recorded by JobMetrics).",
		Buckets:   latencyBuckets,
	}, []string{"kind", "outcome"})

	webhookDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Subsystem: "webhook",
		Name:      "deliveries_total",
		Help:      "Webhook delivery attempts, by outcome (for example success, failure, timeout, failed).",
	}, []string{"outcome"})

	webhookDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace,
		Subsystem: "webhook",
		Name:      "delivery_duration_seconds",
		Help:      "Time of one webhook delivery attempt, by outcome.",
		Buckets:   latencyBuckets,
	}, []string{"outcome"})

	rateLimited = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "rate_limited_total",
		Help:      "Requests refused with 429 because the key's per-minute window was full.",
	})

	readAhead = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "read_ahead_total",
		Help:      "Keyed /v1 graph reads run beside their request's metering statement, by outcome: used (the request was admitted as the caller predicted) or dropped (refused, or admitted as another caller: read again).",
	}, []string{"outcome"})

	responseCache = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "response_cache_total",
		Help:      "Cacheable /v1 graph reads by result: hit (served from the response cache), shared (waited for an identical request in flight), miss (computed and stored) or skip (computed, too large to store).",
	}, []string{"result"})

	mcpCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Subsystem: "mcp",
		Name:      "calls_total",
		Help:      "MCP tool calls and resource reads, by kind (tool or resource), name (the tool or resource template) and outcome (ok, invalid_arguments, payment_required, refused, not_found, bad_request or error).",
	}, []string{"kind", "name", "outcome"})

	mcpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace,
		Subsystem: "mcp",
		Name:      "call_duration_seconds",
		Help:      "Time to serve an MCP tool call or resource read, by kind and name.",
		Buckets:   latencyBuckets,
	}, []string{"kind", "name"})

	// processCollectors are registered in every registry NewRegistry builds.
	processCollectors = []prometheus.Collector{
		httpRequests, httpDuration, httpInFlight,
		graphqlOperations, graphqlComplexity,
		jobOutcomes, jobDuration,
		webhookDeliveries, webhookDuration,
		rateLimited, readAhead, responseCache,
		mcpCalls, mcpDuration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}
)

// JobOutcome counts one worked River job of kind with outcome, for example
// JobOutcome("webhook_delivery", "completed"). Job workers call it; outcome
// should be one of a few fixed words (completed, retried, discarded,
// cancelled, snoozed), never an error message.
func JobOutcome(kind, outcome string) {
	jobOutcomes.WithLabelValues(kind, outcome).Inc()
}

// WebhookDelivery records one webhook delivery attempt: its outcome (a
// fixed word such as success, failure or timeout) and how long the attempt
// took.
func WebhookDelivery(outcome string, d time.Duration) {
	webhookDeliveries.WithLabelValues(outcome).Inc()
	webhookDuration.WithLabelValues(outcome).Observe(d.Seconds())
}

// RateLimited counts one request refused by the per-minute rate limit.
func RateLimited() {
	rateLimited.Inc()
}

// ReadAhead counts one read run beside its request's metering statement
// by outcome (used or dropped).
func ReadAhead(outcome string) {
	readAhead.WithLabelValues(outcome).Inc()
}

// ResponseCache counts one cacheable /v1 graph read by result (hit,
// shared, miss or skip).
func ResponseCache(result string) {
	responseCache.WithLabelValues(result).Inc()
}

// MCPCall records one MCP tool call or resource read: kind is "tool" or
// "resource", name the tool or resource template (a fixed set, never a
// URI), outcome one of a few fixed words.
func MCPCall(kind, name, outcome string, d time.Duration) {
	mcpCalls.WithLabelValues(kind, name, outcome).Inc()
	mcpDuration.WithLabelValues(kind, name).Observe(d.Seconds())
}

// NewRegistry returns a registry holding the process-wide metrics, the Go
// runtime and process collectors, and the given extra collectors (for
// example NewPoolCollector and NewQueueCollector of one database).
func NewRegistry(extra ...prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(processCollectors...)
	reg.MustRegister(extra...)
	return reg
}

// Handler serves reg in the Prometheus text format. A collector that fails
// does not fail the scrape: the other series are still served.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          reg,
		EnableOpenMetrics: false,
	})
}

// httpSeries caches the counter and histogram of one label combination so
// the request path does no label hashing or slice allocation after the
// first request of a route.
type httpSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

type httpSeriesKey struct {
	method, route string
	status        int
}

var (
	httpSeriesMu    sync.RWMutex
	httpSeriesCache = map[httpSeriesKey]httpSeries{}
)

func observeRequest(method, route string, status int, d time.Duration) {
	key := httpSeriesKey{method: method, route: route, status: status}
	httpSeriesMu.RLock()
	s, ok := httpSeriesCache[key]
	httpSeriesMu.RUnlock()
	if !ok {
		code := statusText(status)
		s = httpSeries{
			count:    httpRequests.WithLabelValues(method, route, code),
			duration: httpDuration.WithLabelValues(method, route, code),
		}
		httpSeriesMu.Lock()
		httpSeriesCache[key] = s
		httpSeriesMu.Unlock()
	}
	s.count.Inc()
	s.duration.Observe(d.Seconds())
}

func statusText(status int) string {
	if status < 100 || status > 999 {
		return "unknown"
	}
	return strconv.Itoa(status)
}
