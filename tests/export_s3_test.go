package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
	"github.com/cryptointel/cryptointel/exportstore/s3test"
	"github.com/cryptointel/cryptointel/jobs"
)

// s3ObjectSize returns the size of the object key under prefix in the test
// bucket, read from SeaweedFS directly; found is false when there is none.
func s3ObjectSize(t *testing.T, srv *s3test.Server, prefix, key string) (size int64, found bool) {
	t.Helper()
	out, err := srv.Client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(s3test.Bucket), Key: aws.String(prefix + key)})
	var nf *types.NotFound
	if errors.As(err, &nf) {
		return 0, false
	}
	require.NoError(t, err)
	return aws.ToInt64(out.ContentLength), true
}

// s3Incomplete counts the incomplete multipart uploads under prefix.
func s3Incomplete(t *testing.T, srv *s3test.Server, prefix string) int {
	t.Helper()
	out, err := srv.Client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(s3test.Bucket), Prefix: aws.String(prefix)})
	require.NoError(t, err)
	return len(out.Uploads)
}

// TestExportS3 runs exports against a real S3-compatible server
// (SeaweedFS on loopback, EXPORT_STORAGE_URL=s3://…): every format is
// uploaded, recorded with its checksum and downloaded through the signed
// link with ranges and conditional requests; with redirects on, the link
// answers 302 to a presigned URL that SeaweedFS serves; when the link
// expires the sweep deletes the object from the bucket.
func TestExportS3(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	for _, redirect := range []bool{false, true} {
		t.Run(fmt.Sprintf("redirect=%v", redirect), func(t *testing.T) {
			t.Parallel()
			storageURL := srv.NewURL(t)
			prefix := s3test.PrefixOf(storageURL)
			s := startExportServer(t, exportServerOpts{storageURL: storageURL, redirect: redirect})
			exportSeed(t, s.store, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 120)
			key, _ := exportEnterpriseKey(t, s.store)
			want := exportDBRows(t, s.store, "e.latest_evidence_at >= '2026-10-01T00:00:00Z'", true)
			require.Len(t, want, 120)

			var last exportJobBody
			for _, format := range exportjob.Formats {
				created := s.create(t, key, map[string]any{"scope": "radar.history", "format": format, "since": "2026-10-01T00:00:00Z", "includeEvidence": true})
				job := s.waitDone(t, key, created.ID)
				require.Equal(t, exportjob.StatusCompleted, job.Status, "error: %v", job.Error)
				size, found := s3ObjectSize(t, srv, prefix, exportstore.Key(job.ID, format))
				require.True(t, found, "the object is in the bucket")
				require.Equal(t, *job.ByteSize, size)

				var data []byte
				if !redirect {
					data = exportDownload(t, s, job)
				} else {
					data = exportDownloadRedirected(t, srv, job)
				}
				require.Equal(t, int64(len(want)), *job.RowCount)
				require.Equal(t, want, exportParseRows(t, format, data))
				last = job
			}

			if !redirect {
				// Ranges and conditional requests through the service.
				full := exportDownload(t, s, last)
				status, _, part := s.do(t, http.MethodGet, *last.DownloadURL, "", nil, "Range", "bytes=100-1099")
				require.Equal(t, http.StatusPartialContent, status)
				require.Equal(t, full[100:1100], part)
				status, _, _ = s.do(t, http.MethodGet, *last.DownloadURL, "", nil, "If-None-Match", `"`+*last.SHA256+`"`)
				require.Equal(t, http.StatusNotModified, status)
			}
			// A signed link still checks its signature before any redirect.
			status, _, body := s.do(t, http.MethodGet, strings.Replace(*last.DownloadURL, "sig=", "sig=0", 1), "", nil)
			require.Equal(t, http.StatusForbidden, status, string(body))

			// Expiry deletes the objects from the bucket.
			later := s.now.Load().Add(2 * time.Hour)
			s.now.Store(&later)
			n, err := jobs.ExpireExports(context.Background(), s.store, s.storage)
			require.NoError(t, err)
			require.Equal(t, len(exportjob.Formats), n)
			for _, format := range exportjob.Formats {
				_, found := s3ObjectSize(t, srv, prefix, exportstore.Key(last.ID, format))
				require.False(t, found)
			}
			require.Zero(t, s3Incomplete(t, srv, prefix), "no incomplete multipart upload left")
		})
	}
}

// exportDownloadRedirected follows the signed link by hand: the service
// answers 302 to a presigned URL of the store (never past the link's
// expiry), and the store serves the file with the export's Content-Type
// and Content-Disposition.
func exportDownloadRedirected(t *testing.T, srv *s3test.Server, job exportJobBody) []byte {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(*job.DownloadURL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	loc := resp.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, srv.Endpoint+"/"), "redirects to the store: %s", loc)
	require.Contains(t, loc, "X-Amz-Signature=")
	require.Equal(t, "private, no-store", resp.Header.Get("Cache-Control"))

	resp, err = http.Get(loc)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, exportstore.ContentType(job.Format), resp.Header.Get("Content-Type"))
	require.Equal(t, fmt.Sprintf(`attachment; filename="export-%s.%s"`, job.ID, exportstore.FileExt(job.Format)), resp.Header.Get("Content-Disposition"))
	sum := sha256.Sum256(body)
	require.Equal(t, *job.SHA256, hex.EncodeToString(sum[:]), "the store serves the bytes the checksum was recorded for")
	return body
}

// TestExportS3CrashAndRetry stops the worker in the middle of an S3 upload
// (after its first bytes were written): no object exists under the key and
// nothing can be downloaded; the retried attempt completes with exactly the
// database's rows and no incomplete multipart upload is left behind.
func TestExportS3CrashAndRetry(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	storageURL := srv.NewURL(t)
	prefix := s3test.PrefixOf(storageURL)
	stall := &stallingStorage{started: make(chan struct{})}
	s := startExportServer(t, exportServerOpts{storageURL: storageURL, storage: func(st exportstore.Storage) exportstore.Storage {
		stall.Storage = st
		return stall
	}})
	exportSeed(t, s.store, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 200)
	key, owner := exportEnterpriseKey(t, s.store)
	created := s.create(t, key, map[string]any{"scope": "radar.history", "format": "csv", "since": "2026-10-01T00:00:00Z", "includeEvidence": true})
	select {
	case <-stall.started:
	case <-time.After(60 * time.Second):
		t.Fatal("export never started")
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.client.StopAndCancel(stopCtx))
	_, found := s3ObjectSize(t, srv, prefix, exportstore.Key(created.ID, "csv"))
	require.False(t, found, "no object under the key of an unfinished upload")
	status, _, _ := s.do(t, http.MethodGet, s.handlers.DownloadURL(nil, owner, created.ID, time.Now().Add(time.Hour)), "", nil)
	require.Equal(t, http.StatusNotFound, status)

	s.restartWorker(t, created.ID)
	job := s.waitDone(t, key, created.ID)
	require.Equal(t, exportjob.StatusCompleted, job.Status, "error: %v", job.Error)
	data := exportDownload(t, s, job)
	want := exportDBRows(t, s.store, "e.latest_evidence_at >= '2026-10-01T00:00:00Z'", true)
	require.Equal(t, want, exportParseRows(t, "csv", data))
	require.Zero(t, s3Incomplete(t, srv, prefix))
}
