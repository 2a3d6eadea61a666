package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrObjectNotFound is returned by Storage.Open for a key that was never
// published or has been deleted.
var ErrObjectNotFound = errors.New("export object not found")

// Storage holds export files. A file is written through a TempObject that
// no reader can see until Publish makes it visible atomically under its
// key, so a partial file is never served. LocalStorage is the default; an
// S3-compatible store fits the same interface (multipart upload, completed
// on Publish, aborted on Abort).
type Storage interface {
	// Create starts a new object for key. Leftovers of earlier, interrupted
	// writes of the same key are discarded.
	Create(ctx context.Context, key string) (TempObject, error)
	// Open returns the published object key for reading with range
	// support. Returns ErrObjectNotFound when there is none.
	Open(ctx context.Context, key string) (Object, error)
	// Delete removes the published object key; deleting a missing key is
	// not an error.
	Delete(ctx context.Context, key string) error
}

// TempObject is an object being written.
type TempObject interface {
	io.Writer
	// Publish makes the written bytes durable and visible under the key,
	// replacing any previous object atomically.
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

// LocalStorage stores export files in a directory on the local disk:
// objects are written to a hidden temporary file beside their final name,
// fsynced, and renamed into place.
type LocalStorage struct {
	// Dir is the directory holding the files. It is created if missing.
	Dir string
}

// NewLocalStorage returns a LocalStorage over dir, creating dir.
func NewLocalStorage(dir string) (*LocalStorage, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("error creating export directory: %w", err)
	}
	return &LocalStorage{Dir: dir}, nil
}

var _ Storage = (*LocalStorage)(nil)

// tempPrefix marks files that are being written; they are never opened by
// Open because keys may not start with a dot.
const tempPrefix = ".tmp-"

func (s *LocalStorage) path(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, ".") || strings.ContainsAny(key, `/\`) || key != filepath.Base(key) {
		return "", fmt.Errorf("invalid export object key %q", key)
	}
	return filepath.Join(s.Dir, key), nil
}

// Create implements Storage.
func (s *LocalStorage) Create(_ context.Context, key string) (TempObject, error) {
	final, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("error creating export directory: %w", err)
	}
	// A worker killed mid-write leaves its temporary file behind; the retry
	// removes it.
	if stale, err := filepath.Glob(filepath.Join(s.Dir, tempPrefix+key+".*")); err == nil {
		for _, p := range stale {
			os.Remove(p) //nolint:errcheck
		}
	}
	var nonce [6]byte
	rand.Read(nonce[:]) //nolint:errcheck
	tmp := filepath.Join(s.Dir, tempPrefix+key+"."+hex.EncodeToString(nonce[:]))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return nil, fmt.Errorf("error creating export temp file: %w", err)
	}
	return &localTemp{f: f, tmp: tmp, final: final, dir: s.Dir}, nil
}

// Open implements Storage.
func (s *LocalStorage) Open(_ context.Context, key string) (Object, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, ErrObjectNotFound
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrObjectNotFound
	} else if err != nil {
		return nil, fmt.Errorf("error opening export file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("error reading export file: %w", err)
	}
	return &localObject{File: f, size: st.Size(), mod: st.ModTime()}, nil
}

// Delete implements Storage.
func (s *LocalStorage) Delete(_ context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("error deleting export file: %w", err)
	}
	return nil
}

type localTemp struct {
	f     *os.File
	tmp   string
	final string
	dir   string
	done  bool
}

func (t *localTemp) Write(p []byte) (int, error) { return t.f.Write(p) }

func (t *localTemp) Publish(context.Context) error {
	if t.done {
		return errors.New("export object already finished")
	}
	t.done = true
	if err := t.f.Sync(); err != nil {
		t.f.Close()
		os.Remove(t.tmp) //nolint:errcheck
		return fmt.Errorf("error syncing export file: %w", err)
	}
	if err := t.f.Close(); err != nil {
		os.Remove(t.tmp) //nolint:errcheck
		return fmt.Errorf("error closing export file: %w", err)
	}
	if err := os.Rename(t.tmp, t.final); err != nil {
		os.Remove(t.tmp) //nolint:errcheck
		return fmt.Errorf("error publishing export file: %w", err)
	}
	// Make the rename itself durable.
	if d, err := os.Open(t.dir); err == nil {
		d.Sync() //nolint:errcheck
		d.Close()
	}
	return nil
}

func (t *localTemp) Abort() error {
	if t.done {
		return nil
	}
	t.done = true
	t.f.Close()
	if err := os.Remove(t.tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("error removing export temp file: %w", err)
	}
	return nil
}

type localObject struct {
	*os.File
	size int64
	mod  time.Time
}

func (o *localObject) Size() int64        { return o.size }
func (o *localObject) ModTime() time.Time { return o.mod }
