package cryptointel

// QueueDepth is how many River jobs of one queue sit in one unfinished
// state.
type QueueDepth struct {
	// Queue is the River queue name.
	Queue string
	// State is available, scheduled, retryable, running or pending.
	State string
	// Count is the number of jobs.
	Count int64
}

// UnfinishedJobStates are the River job states that QueueDepths counts:
// every state a job is in before it is completed, cancelled or discarded.
var UnfinishedJobStates = []string{"available", "pending", "retryable", "running", "scheduled"}
