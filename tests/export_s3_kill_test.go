package tests

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
	"github.com/cryptointel/cryptointel/exportstore/s3test"
)

// gateProxy forwards TCP connections to target. Once armed, it lets
// `after` more bytes through towards the target and then holds the rest
// (the upload stalls mid-part, as on a slow network) until opened.
type gateProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	cond    *sync.Cond
	armed   bool
	budget  int64
	stalled bool
}

func newGateProxy(t *testing.T, target string) *gateProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &gateProxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	t.Cleanup(func() {
		ln.Close()
		p.open()
	})
	go p.serve()
	return p
}

func (p *gateProxy) addr() string { return p.ln.Addr().String() }

func (p *gateProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				return
			}
			go func() {
				io.Copy(c, u) //nolint:errcheck
				c.Close()
			}()
			buf := make([]byte, 32<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if !p.pass(int64(n)) {
						break
					}
					if _, werr := u.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			u.Close()
			c.Close()
		}()
	}
}

// pass accounts n bytes towards the target, blocking while the gate holds;
// false when the proxy is closing.
func (p *gateProxy) pass(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed {
		p.budget -= n
		for p.armed && p.budget < 0 {
			p.stalled = true
			p.cond.Wait()
		}
	}
	return true
}

// arm lets after more bytes through, then holds.
func (p *gateProxy) arm(after int64) {
	p.mu.Lock()
	p.armed, p.budget, p.stalled = true, after, false
	p.mu.Unlock()
}

// isStalled reports whether a connection is being held.
func (p *gateProxy) isStalled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stalled
}

// open lets everything through from now on.
func (p *gateProxy) open() {
	p.mu.Lock()
	p.armed = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// TestExportS3SIGKILLDuringUpload SIGKILLs `cryptointel serve` while it
// streams an export to S3 (SeaweedFS) as a multipart upload, after whole
// parts were stored and while the next is in flight, then starts a new
// process on the same database and bucket. Nothing half-written is ever
// visible: no object under the export's key, the job not completed. The
// new process reclaims the silent attempt (EXPORT_STALE_AFTER), aborts the
// dead upload and exports again: the file holds every row (same count,
// same ids, the checksum of the bytes served) and no incomplete upload is
// left. The counts are reported.
func TestExportS3SIGKILLDuringUpload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := s3test.Start(t)
	bin := buildServer(t)
	dbURL := dbtest.NewURL(t)
	store, err := db.Open(ctx, dbURL, db.Options{MaxConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })

	// About 18 MiB of JSON Lines (evidence included): several 5 MiB parts.
	const events = 9000
	exportSeed(t, store, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), events)
	_, err = store.Pool.Exec(ctx, "UPDATE events SET summary = repeat('summary text ', 60) || id")
	require.NoError(t, err)
	key, _ := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)

	proxy := newGateProxy(t, srv.Endpoint[len("http://"):])
	storageURL := srv.NewURL(t)
	prefix := s3test.PrefixOf(storageURL)
	viaProxy := srv.URLAt("http://"+proxy.addr(), s3test.Bucket, prefix)
	env := append([]string{
		"DATABASE_URL=" + dbURL, "WEBHOOK_POLL_INTERVAL=1h",
		"EXPORT_STORAGE_URL=" + viaProxy, "EXPORT_STALE_AFTER=2s",
	}, srv.Env()...)

	// Two whole parts and a half, then the upload stalls: parts go two at a
	// time (exportstore.DefaultConcurrency), so the first two are stored
	// whatever their order and the next ones hang mid-part.
	proxy.arm(exportstore.DefaultPartSize*5/2 + 64<<10)
	logDir := t.TempDir()
	first := startServeProc(t, bin, env, filepath.Join(logDir, "serve1.log"))
	jobID := s3CreateExport(t, first.base, key)
	objectKey := prefix + exportstore.Key(jobID, "jsonl")

	// Wait for the multipart upload to have stored a part and be stalled
	// in the next one.
	var partsStored int
	require.Eventually(t, func() bool {
		ups, err := srv.Client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(s3test.Bucket), Prefix: aws.String(objectKey)})
		if err != nil || len(ups.Uploads) != 1 || !proxy.isStalled() {
			return false
		}
		parts, err := srv.Client.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(s3test.Bucket), Key: ups.Uploads[0].Key, UploadId: ups.Uploads[0].UploadId})
		if err != nil {
			return false
		}
		partsStored = len(parts.Parts)
		return partsStored >= 1
	}, 90*time.Second, 20*time.Millisecond, "the upload never got a part stored; log:\n%s", readLog(first.log))

	require.NoError(t, first.cmd.Process.Kill())
	first.cmd.Wait() //nolint:errcheck

	// Nothing visible: the job is not completed, no object exists.
	var status string
	require.NoError(t, store.Pool.QueryRow(ctx, "SELECT status FROM export_jobs WHERE id = $1", jobID).Scan(&status))
	require.Equal(t, exportjob.StatusRunning, status)
	_, found := s3ObjectSize(t, srv, "", objectKey)
	require.False(t, found, "a killed upload leaves no object")
	require.Equal(t, 1, s3Incomplete(t, srv, prefix), "only an incomplete (invisible) upload")

	proxy.open()
	second := startServeProc(t, bin, env, filepath.Join(logDir, "serve2.log"))
	// Watch the row (the API's rate window is no place to poll).
	deadline := time.Now().Add(3 * time.Minute)
	for status == exportjob.StatusRequested || status == exportjob.StatusRunning {
		require.True(t, time.Now().Before(deadline), "export still %s; log:\n%s", status, readLog(second.log))
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, store.Pool.QueryRow(ctx, "SELECT status FROM export_jobs WHERE id = $1", jobID).Scan(&status))
	}
	job := s3GetExport(t, second.base, key, jobID)
	require.Equal(t, exportjob.StatusCompleted, job.Status, "error: %v", job.Error)

	resp, err := http.Get(*job.DownloadURL)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	sum := sha256.Sum256(body)
	require.Equal(t, *job.SHA256, hex.EncodeToString(sum[:]))
	require.Equal(t, *job.ByteSize, int64(len(body)))
	require.Greater(t, len(body), 2*exportstore.DefaultPartSize, "a multipart file")

	ids := map[int64]bool{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			ID int64 `json:"id"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		ids[line.ID] = true
	}
	require.NoError(t, sc.Err())
	lost := 0
	for i := range events {
		if !ids[int64(500+i)] {
			lost++
		}
	}
	incomplete := s3Incomplete(t, srv, prefix)
	summary(t, "serve SIGKILLed during a multipart S3 upload (%d part(s) stored, next part in flight): rows exported %d of %d, rows lost %d, duplicate rows %d, partial objects visible 0, incomplete uploads left %d, file %d bytes with checksum verified",
		partsStored, *job.RowCount, events, lost, int(*job.RowCount)-len(ids), incomplete, len(body))
	require.Zero(t, lost)
	require.Equal(t, int64(events), *job.RowCount)
	require.Len(t, ids, events)
	require.Zero(t, incomplete, "the dead upload was aborted")
}

// s3CreateExport requests a JSON Lines radar.history export (with
// evidence) from the server at base and returns its id.
func s3CreateExport(t *testing.T, base, key string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/export/jobs", bytes.NewReader([]byte(`{"scope":"radar.history","format":"jsonl","since":"2026-10-01T00:00:00Z","includeEvidence":true}`)))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct{ Data exportJobBody }
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", b)
	require.NoError(t, json.Unmarshal(b, &out))
	return out.Data.ID
}

// s3GetExport reads export job id from the server at base.
func s3GetExport(t *testing.T, base, key, id string) exportJobBody {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/v1/export/jobs/"+id, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	var out struct{ Data exportJobBody }
	require.NoError(t, json.Unmarshal(b, &out))
	return out.Data
}
