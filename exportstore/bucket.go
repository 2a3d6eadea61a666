package exportstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"
)

// Defaults of Options.
const (
	// DefaultPartSize is the size of one multipart part (S3's minimum).
	DefaultPartSize = 5 << 20
	// DefaultConcurrency is how many parts upload at once.
	DefaultConcurrency = 2
)

// Options tune Open.
type Options struct {
	// PartSize is the size of one part of a multipart upload, and so of the
	// buffer each part in flight holds. Defaults to DefaultPartSize (5 MiB,
	// S3's minimum).
	PartSize int
	// Concurrency is how many parts of one upload are sent at once; an
	// upload holds at most (Concurrency+1) × PartSize bytes in memory
	// (15 MiB by default), whatever the file's size. Defaults to
	// DefaultConcurrency.
	Concurrency int
}

// Bucket is the Storage over a gocloud.dev/blob bucket.
type Bucket struct {
	bucket *blob.Bucket
	opts   Options
	// dir is the directory of a file:// bucket ("" otherwise).
	dir string
	// s3 is the client of an s3:// bucket (nil otherwise), its bucket name
	// and key prefix, for what blob does not cover: incomplete multipart
	// uploads.
	s3       *s3.Client
	s3Bucket string
	s3Prefix string
}

var _ Storage = (*Bucket)(nil)

// Open opens the store named by rawURL, in gocloud.dev's URL form:
//
//   - file:///var/lib/cryptointel/exports — a local directory, created if
//     missing. Objects are plain files named by their key, with no sidecar
//     metadata files; uploads are temporary files beside them.
//   - s3://BUCKET?endpoint=http://127.0.0.1:8333&use_path_style=true&region=us-east-1
//     — any S3-compatible store; credentials come from the standard
//     AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the other sources of
//     the AWS SDK's default chain). A prefix=exports/ parameter keeps the
//     objects under a prefix. The bucket must exist.
//
// The other gocloud.dev parameters of each scheme apply (see
// gocloud.dev/blob/fileblob and gocloud.dev/blob/s3blob).
func Open(ctx context.Context, rawURL string, opts Options) (*Bucket, error) {
	if opts.PartSize <= 0 {
		opts.PartSize = DefaultPartSize
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("error parsing export storage url: %w", err)
	}
	b := &Bucket{opts: opts}
	switch u.Scheme {
	case fileblob.Scheme:
		b.dir = filepath.FromSlash(u.Path)
		if b.dir == "" {
			return nil, errors.New("error opening export storage: a file:// url needs a directory path")
		}
		q := u.Query()
		// Plain files, exactly the export's bytes; temporary files in the
		// same directory so the publishing rename stays on one file
		// system.
		q.Set("create_dir", "true")
		q.Set("no_tmp_dir", "true")
		q.Set("metadata", "skip")
		u.RawQuery = q.Encode()
	case s3blob.Scheme:
		b.s3Bucket = u.Host
		q := u.Query()
		b.s3Prefix = q.Get("prefix")
		// Whole-object checksums of multipart objects cannot be checked on
		// read (the SDK logs a warning for every such download); the
		// export's SHA-256 is recorded at upload and served as its ETag.
		if q.Get("response_checksum_validation") == "" {
			q.Set("response_checksum_validation", "when_required")
			u.RawQuery = q.Encode()
		}
	default:
		return nil, fmt.Errorf("error opening export storage: unsupported scheme %q (use file:// or s3://)", u.Scheme)
	}
	bucket, err := blob.OpenBucket(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("error opening export storage: %w", err)
	}
	b.bucket = bucket
	if b.s3Bucket != "" && !bucket.As(&b.s3) {
		bucket.Close()
		return nil, errors.New("error opening export storage: no S3 client behind the s3:// bucket")
	}
	return b, nil
}

// OpenDir opens the local directory dir as a store (Open with a file://
// URL).
func OpenDir(ctx context.Context, dir string) (*Bucket, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("error opening export storage: %w", err)
	}
	return Open(ctx, (&url.URL{Scheme: fileblob.Scheme, Path: filepath.ToSlash(abs)}).String(), Options{})
}

// Close releases the bucket.
func (b *Bucket) Close() error { return b.bucket.Close() }

// Local reports whether the store is a local directory.
func (b *Bucket) Local() bool { return b.dir != "" }

// Ping checks that the store answers (the bucket exists and the
// credentials are accepted).
func (b *Bucket) Ping(ctx context.Context) error {
	if b.dir != "" {
		if _, err := os.Stat(b.dir); err != nil {
			return fmt.Errorf("error checking export directory: %w", err)
		}
		return nil
	}
	if _, err := b.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.s3Bucket)}); err != nil {
		return fmt.Errorf("error checking export bucket %s: %w", b.s3Bucket, err)
	}
	return nil
}

// tempSuffix ends the names of fileblob's temporary files.
const tempSuffix = ".tmp"

// Create implements Storage.
func (b *Bucket) Create(ctx context.Context, key string) (Upload, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	// A writer killed mid-upload leaves its leftover behind; the retry
	// removes it.
	if _, err := b.sweep(ctx, key, time.Now().Add(time.Hour)); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	u := &upload{b: b, key: key, dir: b.dir, cancel: cancel}
	w, err := b.bucket.NewWriter(wctx, key, &blob.WriterOptions{
		ContentType:    contentTypeOfKey(key),
		BufferSize:     b.opts.PartSize,
		MaxConcurrency: b.opts.Concurrency,
		BeforeWrite: func(as func(any) bool) error {
			// Keep the *os.File of a local upload, to fsync it before the
			// publishing rename.
			as(&u.file)
			// S3's transfer manager buffers up to 16 MiB before it starts
			// a multipart upload: start with the first part instead, so an
			// upload holds at most (Concurrency+1) × PartSize bytes.
			var tm *transfermanager.Client
			if b.s3 != nil && as(&tm) {
				*tm = *transfermanager.New(b.s3, func(o *transfermanager.Options) {
					o.RequestChecksumCalculation = b.s3.Options().RequestChecksumCalculation
					o.PartSizeBytes = int64(b.opts.PartSize)
					o.MultipartUploadThreshold = int64(b.opts.PartSize)
					o.Concurrency = b.opts.Concurrency
				})
			}
			return nil
		},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("error creating export object: %w", err)
	}
	u.w = w
	return u, nil
}

type upload struct {
	b      *Bucket
	key    string
	w      *blob.Writer
	file   *os.File // the temporary file of a local upload
	dir    string
	cancel context.CancelFunc
	done   bool
}

func (u *upload) Write(p []byte) (int, error) { return u.w.Write(p) }

// Publish implements Upload.
func (u *upload) Publish(ctx context.Context) error {
	if u.done {
		return errors.New("export object already finished")
	}
	u.done = true
	defer u.cancel()
	if err := ctx.Err(); err != nil {
		u.cancel()
		u.w.Close() //nolint:errcheck // aborted
		return err
	}
	if u.file != nil {
		// blob's local writer renames without syncing: make the bytes
		// durable before they become visible.
		if err := u.file.Sync(); err != nil {
			u.cancel()
			u.w.Close() //nolint:errcheck
			return fmt.Errorf("error syncing export file: %w", err)
		}
	}
	if err := u.w.Close(); err != nil {
		return fmt.Errorf("error publishing export object: %w", err)
	}
	if u.dir != "" {
		// Make the rename itself durable.
		if d, err := os.Open(u.dir); err == nil {
			d.Sync() //nolint:errcheck
			d.Close()
		}
	}
	return nil
}

// Abort implements Upload: cancelling the writer's context before Close
// discards the upload (the temporary file is removed). The transfer
// manager's own abort of a multipart upload runs under that cancelled
// context and fails, so the key's incomplete uploads are aborted here.
func (u *upload) Abort() error {
	if u.done {
		return nil
	}
	u.done = true
	u.cancel()
	u.w.Close() //nolint:errcheck // cancelled: the upload is discarded
	if u.b.s3 == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := u.b.sweepUploads(ctx, u.key, time.Now().Add(time.Hour)); err != nil {
		return fmt.Errorf("error aborting export object: %w", err)
	}
	return nil
}

// Open implements Storage.
func (b *Bucket) Open(ctx context.Context, key string) (Object, error) {
	if validKey(key) != nil {
		return nil, ErrNotFound
	}
	r, err := b.bucket.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("error opening export object: %w", err)
	}
	return r, nil
}

// Delete implements Storage.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := validKey(key); err != nil {
		return err
	}
	if err := b.bucket.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("error deleting export object: %w", err)
	}
	return nil
}

// SignedURL implements Storage.
func (b *Bucket) SignedURL(ctx context.Context, key string, expiry time.Duration, contentType, contentDisposition string) (string, error) {
	if b.s3 == nil {
		return "", ErrNoSignedURL
	}
	if err := validKey(key); err != nil {
		return "", err
	}
	u, err := b.bucket.SignedURL(ctx, key, &blob.SignedURLOptions{
		Expiry: expiry,
		Method: http.MethodGet,
		BeforeSign: func(as func(any) bool) error {
			var in *s3.GetObjectInput
			if as(&in) {
				in.ResponseContentType = aws.String(contentType)
				in.ResponseContentDisposition = aws.String(contentDisposition)
			}
			return nil
		},
	})
	if err != nil {
		return "", fmt.Errorf("error signing export download url: %w", err)
	}
	return u, nil
}

// Sweep implements Storage.
func (b *Bucket) Sweep(ctx context.Context, cutoff time.Time) (int, error) {
	return b.sweep(ctx, "", cutoff)
}

// sweep removes the leftovers of uploads started before cutoff: of key
// only, or of every key when key is empty.
func (b *Bucket) sweep(ctx context.Context, key string, cutoff time.Time) (int, error) {
	if b.dir != "" {
		return b.sweepFiles(key, cutoff)
	}
	return b.sweepUploads(ctx, key, cutoff)
}

// sweepFiles removes the temporary files (KEY.HEX.tmp) of local uploads
// last written before cutoff.
func (b *Bucket) sweepFiles(key string, cutoff time.Time) (int, error) {
	pattern := "*" + tempSuffix
	if key != "" {
		pattern = key + ".*" + tempSuffix
	}
	matches, err := filepath.Glob(filepath.Join(b.dir, pattern))
	if err != nil {
		return 0, fmt.Errorf("error listing export temporary files: %w", err)
	}
	n := 0
	for _, p := range matches {
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || !st.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(p); err == nil {
			n++
		} else if !errors.Is(err, os.ErrNotExist) {
			return n, fmt.Errorf("error removing export temporary file: %w", err)
		}
	}
	return n, nil
}

// sweepUploads aborts the incomplete multipart uploads started before
// cutoff under the bucket's prefix (of key only, when given).
func (b *Bucket) sweepUploads(ctx context.Context, key string, cutoff time.Time) (int, error) {
	prefix := b.s3Prefix + key
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(b.s3Bucket), Prefix: aws.String(prefix)}
	n := 0
	for {
		out, err := b.s3.ListMultipartUploads(ctx, in)
		if err != nil {
			return n, fmt.Errorf("error listing incomplete export uploads: %w", err)
		}
		for _, up := range out.Uploads {
			if up.Key == nil || up.UploadId == nil || !strings.HasPrefix(*up.Key, prefix) {
				continue
			}
			if key != "" && *up.Key != prefix {
				continue // another key that starts with this one
			}
			if up.Initiated != nil && !up.Initiated.Before(cutoff) {
				continue
			}
			_, err := b.s3.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(b.s3Bucket), Key: up.Key, UploadId: up.UploadId,
			})
			if err != nil {
				return n, fmt.Errorf("error aborting incomplete export upload: %w", err)
			}
			n++
		}
		if out.IsTruncated == nil || !*out.IsTruncated {
			return n, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}

// IncompleteUploads counts the incomplete multipart uploads under the
// bucket's prefix (0 for a local directory). Tests and operators use it
// to see that nothing was left behind.
func (b *Bucket) IncompleteUploads(ctx context.Context) (int, error) {
	if b.s3 == nil {
		return 0, nil
	}
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(b.s3Bucket), Prefix: aws.String(b.s3Prefix)}
	n := 0
	for {
		out, err := b.s3.ListMultipartUploads(ctx, in)
		if err != nil {
			return n, fmt.Errorf("error listing incomplete export uploads: %w", err)
		}
		n += len(out.Uploads)
		if out.IsTruncated == nil || !*out.IsTruncated {
			return n, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}
