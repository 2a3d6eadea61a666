package observe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db/dbtest"
)

func TestJobMetricsOutcomes(t *testing.T) {
	t.Parallel()
	m := &JobMetrics{}
	for _, tc := range []struct {
		name    string
		attempt int
		err     error
		want    string
	}{
		{"Completed", 1, nil, JobCompleted},
		{"Retried", 1, errors.New("flaky"), JobRetried},
		{"Discarded", 5, errors.New("still flaky"), JobDiscarded},
		{"Cancelled", 1, river.JobCancel(errors.New("gone")), JobCancelled},
		{"Snoozed", 1, river.JobSnooze(time.Minute), JobSnoozed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind := "outcome_test_" + tc.name
			job := &rivertype.JobRow{Kind: kind, Attempt: tc.attempt, MaxAttempts: 5}
			err := m.Work(context.Background(), job, func(context.Context) error { return tc.err })
			require.Equal(t, tc.err, err, "the worker's error passes through")
			require.Equal(t, 1.0, testutil.ToFloat64(jobOutcomes.WithLabelValues(kind, tc.want)))
			var sample dto.Metric
			require.NoError(t, jobDuration.WithLabelValues(kind, tc.want).(prometheus.Metric).Write(&sample))
			require.EqualValues(t, 1, sample.GetHistogram().GetSampleCount())
		})
	}
}

func TestJobMetricsPanic(t *testing.T) {
	t.Parallel()
	job := &rivertype.JobRow{Kind: "outcome_test_panic", Attempt: 1, MaxAttempts: 5}
	require.PanicsWithValue(t, "boom", func() {
		(&JobMetrics{}).Work(context.Background(), job, func(context.Context) error { panic("boom") }) //nolint:errcheck
	})
	require.Equal(t, 1.0, testutil.ToFloat64(jobOutcomes.WithLabelValues("outcome_test_panic", JobPanicked)))
}

type metricsTestArgs struct{}

func (metricsTestArgs) Kind() string { return "observe_metrics_test" }

type metricsTestWorker struct {
	river.WorkerDefaults[metricsTestArgs]
}

func (metricsTestWorker) Work(context.Context, *river.Job[metricsTestArgs]) error { return nil }

// TestRegisterJobMetrics works a real job on a River client configured
// with RegisterJobMetrics and sees it counted.
func TestRegisterJobMetrics(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	workers := river.NewWorkers()
	river.AddWorker(workers, metricsTestWorker{})
	cfg := &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Workers: workers,
	}
	require.NoError(t, RegisterJobMetrics(workers, cfg))
	client, err := river.NewClient(riverpgxv5.New(store.Pool), cfg)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events, stop := client.Subscribe(river.EventKindJobCompleted)
	defer stop()
	require.NoError(t, client.Start(ctx))
	defer client.Stop(context.Background()) //nolint:errcheck

	_, err = client.Insert(ctx, metricsTestArgs{}, nil)
	require.NoError(t, err)
	select {
	case ev := <-events:
		require.Equal(t, "observe_metrics_test", ev.Job.Kind)
	case <-ctx.Done():
		t.Fatal("the job was not worked")
	}
	require.Equal(t, 1.0, testutil.ToFloat64(jobOutcomes.WithLabelValues("observe_metrics_test", JobCompleted)))
}
