package exportstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/exportstore"
	"github.com/cryptointel/cryptointel/exportstore/s3test"
)

type testBundle struct {
	store *exportstore.Bucket
	// leftovers counts what interrupted uploads left: temporary files of
	// a directory, incomplete multipart uploads of S3.
	leftovers func(t *testing.T) int
	// visible lists the published objects, read from the store directly.
	visible func(t *testing.T) []string
}

// stores returns each kind of store, fresh for t: a local directory and a
// prefix in the SeaweedFS test server's bucket.
func stores(t *testing.T) map[string]func(t *testing.T) *testBundle {
	return map[string]func(t *testing.T) *testBundle{
		"file": func(t *testing.T) *testBundle {
			dir := t.TempDir()
			store, err := exportstore.OpenDir(context.Background(), dir)
			require.NoError(t, err)
			t.Cleanup(func() { store.Close() })
			list := func(t *testing.T, temp bool) []string {
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				var out []string
				for _, e := range entries {
					if strings.HasSuffix(e.Name(), ".tmp") == temp {
						out = append(out, e.Name())
					}
				}
				return out
			}
			return &testBundle{store: store,
				leftovers: func(t *testing.T) int { return len(list(t, true)) },
				visible:   func(t *testing.T) []string { return list(t, false) }}
		},
		"s3": func(t *testing.T) *testBundle {
			srv := s3test.Start(t)
			u := srv.NewURL(t)
			store, err := exportstore.Open(context.Background(), u, exportstore.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { store.Close() })
			prefix := s3test.PrefixOf(u)
			return &testBundle{store: store,
				leftovers: func(t *testing.T) int {
					n, err := store.IncompleteUploads(context.Background())
					require.NoError(t, err)
					return n
				},
				visible: func(t *testing.T) []string {
					out, err := srv.Client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(s3test.Bucket), Prefix: aws.String(prefix)})
					require.NoError(t, err)
					var keys []string
					for _, o := range out.Contents {
						keys = append(keys, strings.TrimPrefix(*o.Key, prefix))
					}
					return keys
				}}
		},
	}
}

// forEachStore runs test, in parallel, on each kind of store.
func forEachStore(t *testing.T, test func(t *testing.T, name string, b *testBundle)) {
	for name, setup := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, name, setup(t))
		})
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

// TestPublishIsAtomic streams a file of several multipart parts: nothing is
// visible under its key until Publish, then exactly the written bytes are,
// with their size and a range read working.
func TestPublishIsAtomic(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, b *testBundle) {
		ctx := context.Background()
		data := randomBytes(t, 2*exportstore.DefaultPartSize+12345)
		up, err := b.store.Create(ctx, "job1.jsonl")
		require.NoError(t, err)
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 256<<10)
			_, err := up.Write(rest[:n])
			require.NoError(t, err)
			rest = rest[n:]
		}
		_, err = b.store.Open(ctx, "job1.jsonl")
		require.ErrorIs(t, err, exportstore.ErrNotFound, "nothing visible before Publish")
		require.Empty(t, b.visible(t))
		require.NoError(t, up.Publish(ctx))
		require.Equal(t, []string{"job1.jsonl"}, b.visible(t))
		require.Zero(t, b.leftovers(t))

		obj, err := b.store.Open(ctx, "job1.jsonl")
		require.NoError(t, err)
		defer obj.Close()
		require.Equal(t, int64(len(data)), obj.Size())
		require.WithinDuration(t, time.Now(), obj.ModTime(), time.Minute)
		got, err := io.ReadAll(obj)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, got), "content differs")

		// Range reads, as http.ServeContent does them.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o, err := b.store.Open(r.Context(), "job1.jsonl")
			require.NoError(t, err)
			defer o.Close()
			http.ServeContent(w, r, "", o.ModTime(), o)
		}))
		defer srv.Close()
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Range", "bytes=5242000-5242999")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusPartialContent, resp.StatusCode)
		part, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, data[5242000:5243000], part)
	})
}

// TestAbortLeavesNothing aborts an upload after some parts: no object, no
// leftover.
func TestAbortLeavesNothing(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, b *testBundle) {
		ctx := context.Background()
		up, err := b.store.Create(ctx, "job2.csv")
		require.NoError(t, err)
		_, err = up.Write(randomBytes(t, exportstore.DefaultPartSize+1))
		require.NoError(t, err)
		require.NoError(t, up.Abort())
		require.NoError(t, up.Abort(), "a second Abort is a no-op")
		_, err = b.store.Open(ctx, "job2.csv")
		require.ErrorIs(t, err, exportstore.ErrNotFound)
		require.Empty(t, b.visible(t))
		require.Eventually(t, func() bool { return b.leftovers(t) == 0 }, 10*time.Second, 100*time.Millisecond)
	})
}

// TestKilledUploadIsSwept leaves an upload unfinished, as a killed process
// does (a temporary file; an incomplete multipart upload with parts
// stored): it is never visible, the next upload of the same key removes
// it, and Sweep removes those of other keys once older than its cutoff.
func TestKilledUploadIsSwept(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, b *testBundle) {
		ctx := context.Background()
		kill := func(key string) {
			up, err := b.store.Create(ctx, key)
			require.NoError(t, err)
			_, err = up.Write(randomBytes(t, 2*exportstore.DefaultPartSize+100))
			require.NoError(t, err)
			// Never published nor aborted.
		}
		kill("a.parquet")
		kill("b.parquet")
		require.Eventually(t, func() bool { return b.leftovers(t) == 2 }, 10*time.Second, 50*time.Millisecond)
		require.Empty(t, b.visible(t), "an unfinished upload is never visible")

		// Retrying a: its leftover goes.
		up, err := b.store.Create(ctx, "a.parquet")
		require.NoError(t, err)
		_, err = up.Write([]byte("whole file"))
		require.NoError(t, err)
		require.NoError(t, up.Publish(ctx))
		require.Equal(t, 1, b.leftovers(t))

		n, err := b.store.Sweep(ctx, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		require.Zero(t, n, "younger than the cutoff: kept")
		n, err = b.store.Sweep(ctx, time.Now().Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Zero(t, b.leftovers(t))
		require.Equal(t, []string{"a.parquet"}, b.visible(t))
	})
}

// TestKeysAndDelete refuses keys that could escape the store and deletes
// idempotently.
func TestKeysAndDelete(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, b *testBundle) {
		ctx := context.Background()
		for _, key := range []string{"", "../a", "a/b", ".hidden", `a\b`} {
			_, err := b.store.Create(ctx, key)
			require.Error(t, err, key)
			_, err = b.store.Open(ctx, key)
			require.ErrorIs(t, err, exportstore.ErrNotFound, key)
		}
		require.NoError(t, b.store.Delete(ctx, "missing.jsonl"))
		up, err := b.store.Create(ctx, "x.jsonl")
		require.NoError(t, err)
		require.NoError(t, up.Publish(ctx), "an empty export is a valid file")
		obj, err := b.store.Open(ctx, "x.jsonl")
		require.NoError(t, err)
		require.Zero(t, obj.Size())
		obj.Close()
		require.NoError(t, b.store.Delete(ctx, "x.jsonl"))
		_, err = b.store.Open(ctx, "x.jsonl")
		require.ErrorIs(t, err, exportstore.ErrNotFound)
		require.NoError(t, b.store.Ping(ctx))
	})
}

// TestSignedURL: an S3 store signs a GET URL that the store itself honours
// (SeaweedFS checks the signature), with the requested Content-Type and
// Content-Disposition; a tampered one is refused. A directory cannot sign.
func TestSignedURL(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, name string, b *testBundle) {
		ctx := context.Background()
		up, err := b.store.Create(ctx, "s.csv")
		require.NoError(t, err)
		_, err = up.Write([]byte("id,title\n1,a\n"))
		require.NoError(t, err)
		require.NoError(t, up.Publish(ctx))

		u, err := b.store.SignedURL(ctx, "s.csv", time.Minute, "text/csv; charset=utf-8", `attachment; filename="export-s.csv"`)
		if name == "file" {
			require.ErrorIs(t, err, exportstore.ErrNoSignedURL)
			return
		}
		require.NoError(t, err)
		resp, err := http.Get(u)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		require.Equal(t, "id,title\n1,a\n", string(body))
		require.Equal(t, "text/csv; charset=utf-8", resp.Header.Get("Content-Type"))
		require.Equal(t, `attachment; filename="export-s.csv"`, resp.Header.Get("Content-Disposition"))

		tampered := strings.Replace(u, "X-Amz-Expires=60", "X-Amz-Expires=600", 1)
		require.NotEqual(t, u, tampered)
		resp, err = http.Get(tampered)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
	})
}

// TestOpenErrors: unknown schemes are refused; a missing bucket or wrong
// credentials fail Ping.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := exportstore.Open(ctx, "gs://bucket", exportstore.Options{})
	require.ErrorContains(t, err, "unsupported scheme")
	_, err = exportstore.Open(ctx, "file://", exportstore.Options{})
	require.Error(t, err)

	dir := filepath.Join(t.TempDir(), "new", "dir")
	store, err := exportstore.Open(ctx, "file://"+dir, exportstore.Options{})
	require.NoError(t, err, "a missing directory is created")
	require.NoError(t, store.Ping(ctx))
	store.Close()

	srv := s3test.Start(t)
	store, err = exportstore.Open(ctx, srv.URL("no-such-bucket", ""), exportstore.Options{})
	require.NoError(t, err)
	require.Error(t, store.Ping(ctx))
	store.Close()
}
