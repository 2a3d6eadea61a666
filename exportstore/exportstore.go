// Package exportstore holds the exports: their jobs' rows in PostgreSQL
// (jobs.go: created within the account's bounds with their River job,
// started, progressed, completed, failed, expired and reclaimed on db's
// connections) and their files in object storage through
// gocloud.dev/blob: a local directory (file://, the default) or any
// S3-compatible store (s3://). The export worker streams a file into it and
// the download handler reads it back; neither knows which store it is.
//
// Every store gives the same guarantee: an object is written through an
// Upload that no reader can see until Publish makes it visible whole under
// its key. A local file is written beside its final name, fsynced and
// renamed into place; an S3 object is a multipart upload, streamed part by
// part (never held whole in memory) and visible only once the upload is
// completed. A writer killed mid-way leaves at most an invisible leftover —
// a temporary file, an incomplete multipart upload — which the next upload
// of the same key and the periodic Sweep remove.
package exportstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrNotFound is returned by Storage.Open for a key that was never
// published or has been deleted.
var ErrNotFound = errors.New("export object not found")

// ErrNoSignedURL is returned by Storage.SignedURL when the store cannot
// sign URLs (a local directory).
var ErrNoSignedURL = errors.New("export storage cannot sign download URLs")

// Storage holds export files. Bucket (gocloud.dev/blob) is the
// implementation; tests wrap it to inject faults.
type Storage interface {
	// Create starts a new object for key. Leftovers of earlier, interrupted
	// uploads of the same key are discarded.
	Create(ctx context.Context, key string) (Upload, error)
	// Open returns the published object key for reading, with range
	// support. Returns ErrNotFound when there is none.
	Open(ctx context.Context, key string) (Object, error)
	// Delete removes the published object key; deleting a missing key is
	// not an error.
	Delete(ctx context.Context, key string) error
	// SignedURL returns a URL from which a client can GET the published
	// object key directly from the store until expiry, served with the
	// given Content-Type and Content-Disposition. Returns ErrNoSignedURL
	// when the store cannot sign URLs.
	SignedURL(ctx context.Context, key string, expiry time.Duration, contentType, contentDisposition string) (string, error)
	// Sweep removes what interrupted uploads started before cutoff left
	// behind (temporary files, incomplete multipart uploads) and returns
	// how many it removed. An upload still running is never touched as
	// long as cutoff is older than the longest upload.
	Sweep(ctx context.Context, cutoff time.Time) (int, error)
}

// Upload is an object being written.
type Upload interface {
	io.Writer
	// Publish finishes the upload and makes the written bytes durable and
	// visible under the key, replacing any previous object atomically.
	Publish(ctx context.Context) error
	// Abort discards the written bytes. It is safe after Publish (a no-op).
	Abort() error
}

// Object is a published object opened for reading.
type Object interface {
	io.ReadSeekCloser
	// Size is the object's length in bytes.
	Size() int64
	// ModTime is when the object was published.
	ModTime() time.Time
}

// FileExt returns the file extension (and key suffix) of an export
// format: "jsonl", "csv" or "parquet".
func FileExt(format string) string {
	switch format {
	case "csv":
		return "csv"
	case "parquet":
		return "parquet"
	}
	return "jsonl"
}

// ContentType returns the Content-Type of an export format's files.
func ContentType(format string) string {
	switch format {
	case "csv":
		return "text/csv; charset=utf-8"
	case "parquet":
		return "application/vnd.apache.parquet"
	}
	return "application/x-ndjson"
}

// contentTypeOfKey returns the Content-Type of the file named key.
func contentTypeOfKey(key string) string {
	for _, format := range []string{"csv", "parquet"} {
		if strings.HasSuffix(key, "."+FileExt(format)) {
			return ContentType(format)
		}
	}
	return ContentType("jsonl")
}

// Key is the storage key of export job id's file in format.
func Key(id, format string) string { return id + "." + FileExt(format) }

// validKey reports whether key is a plain object name: not empty, not
// starting with a dot (temporary files do), no path separators.
func validKey(key string) error {
	if key == "" || key[0] == '.' {
		return fmt.Errorf("invalid export object key %q", key)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c == '/' || c == '\\' || c < 0x20 {
			return fmt.Errorf("invalid export object key %q", key)
		}
	}
	return nil
}
