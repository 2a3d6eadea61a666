package jobs

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/exportjob"
)

// TestExportParquetSchema checks the logical types a standard reader sees
// in the file's own schema: INT64 ids, TIMESTAMP(MILLIS, UTC), standard
// three-level LIST groups, an optional DOUBLE significance, STRING text.
func TestExportParquetSchema(t *testing.T) {
	t.Parallel()
	b := setupExport(t, 12)
	job := b.fx.createJob(t, b.store, exportjob.ScopeReplayGlobal, exportjob.FormatParquet,
		exportjob.Params{Since: ptime(b.fx.base.Add(-time.Hour)), IncludeEvidence: true})
	require.NoError(t, b.worker.Run(context.Background(), job.ID, false))
	data := b.readFile(t, b.reload(t, job.ID))
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	require.Equal(t, int64(12), f.NumRows())
	schema := f.Schema().String()
	for _, want := range []string{
		"required int64 id (INT(64,true));",
		"required binary title (STRING);",
		"required group bullets (LIST) {\n\t\trepeated group list {\n\t\t\trequired binary element (STRING);",
		"required group owners (LIST)",
		"required group evidence (LIST)",
		"required int64 timestamp (TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS));",
		"required int64 latestEvidenceTimestamp (TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS));",
		"optional double significance;",
	} {
		require.Contains(t, schema, want)
	}
}
