// Package s3test runs a real S3-compatible server for tests: SeaweedFS's
// `weed server -s3` on loopback ports, with one access key, shared by the
// tests of one test binary. Each test gets its own key prefix in one
// bucket (NewURL), so tests run in parallel without seeing each other's
// objects.
//
// The weed binary is $WEED_BIN when set (`make test` builds it first with
// scripts/seaweedfs-build.sh), otherwise that script is run, which builds
// it once per machine and version (a few minutes) and caches it.
package s3test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Credentials and bucket of the test server.
const (
	AccessKey = "cryptointel-test"
	SecretKey = "cryptointel-test-secret"
	Region    = "us-east-1"
	Bucket    = "cryptointel-exports"
)

// Server is a running SeaweedFS S3 endpoint.
type Server struct {
	// Endpoint is the S3 endpoint, http://127.0.0.1:PORT.
	Endpoint string
	// Client is an S3 client of the endpoint with the test credentials.
	Client *s3.Client
	// Dir is the server's data directory; its log is Dir/weed.log.
	Dir string
}

var (
	once     sync.Once
	shared   *Server
	startErr error
	prefixes atomic.Int64
)

// Start returns the test binary's server, starting it on first use. It
// also sets AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the process
// environment to the server's key, so code under test finds its
// credentials the standard way. The server runs until the test binary
// exits.
func Start(t testing.TB) *Server {
	t.Helper()
	once.Do(func() {
		shared, startErr = start()
	})
	if startErr != nil {
		t.Fatalf("s3test: %v", startErr)
	}
	return shared
}

// NewURL returns an EXPORT_STORAGE_URL for t: the test bucket with a key
// prefix of t's own.
func (s *Server) NewURL(t testing.TB) string {
	t.Helper()
	prefix := fmt.Sprintf("%s-%d-%d/", sanitize(t.Name()), os.Getpid(), prefixes.Add(1))
	return s.URL(Bucket, prefix)
}

// URL returns the gocloud.dev URL of bucket on the server, with objects
// under prefix (may be empty).
func (s *Server) URL(bucket, prefix string) string { return s.URLAt(s.Endpoint, bucket, prefix) }

// URLAt is URL with another endpoint, e.g. a proxy in front of the server.
func (s *Server) URLAt(endpoint, bucket, prefix string) string {
	q := url.Values{"endpoint": {endpoint}, "use_path_style": {"true"}, "region": {Region}}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	return "s3://" + bucket + "?" + q.Encode()
}

// Env returns the environment a service process needs to reach the
// server: the standard AWS credential variables.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey, "AWS_EC2_METADATA_DISABLED=true"}
}

// PrefixOf returns the key prefix of a URL made by NewURL.
func PrefixOf(storageURL string) string {
	u, err := url.Parse(storageURL)
	if err != nil {
		return ""
	}
	return u.Query().Get("prefix")
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := b.String()
	if len(out) > 60 {
		out = out[len(out)-60:]
	}
	return out
}

// weedBin returns the weed binary: $WEED_BIN, or the one the build script
// prints (building it when not cached).
func weedBin() (string, error) {
	if bin := os.Getenv("WEED_BIN"); bin != "" {
		return bin, nil
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the repository to build SeaweedFS: set WEED_BIN")
	}
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "seaweedfs-build.sh")
	cmd := exec.Command("bash", script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("error building SeaweedFS with %s: %w", script, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// freePorts returns n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// dirPrefix names the data directories of test servers in the temporary
// directory; a directory whose server's process is gone is removed by the
// next start.
const dirPrefix = "cryptointel-s3test-"

func removeStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) == nil {
			continue // its test binary still runs
		}
		os.RemoveAll(d)
	}
}

func start() (*Server, error) {
	bin, err := weedBin()
	if err != nil {
		return nil, err
	}
	removeStaleDirs()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	config := fmt.Sprintf(`{"identities":[{"name":"cryptointel","credentials":[{"accessKey":%q,"secretKey":%q}],"actions":["Admin","Read","Write","List","Tagging"]}]}`, AccessKey, SecretKey)
	if err := os.WriteFile(filepath.Join(dir, "s3.json"), []byte(config), 0o600); err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(8)
	if err != nil {
		return nil, err
	}
	p := func(i int) string { return strconv.Itoa(ports[i]) }
	cmd := exec.Command(bin, "server",
		"-dir="+filepath.Join(dir, "data"), "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port="+p(0), "-master.port.grpc="+p(1), "-master.volumeSizeLimitMB=64",
		"-volume.port="+p(2), "-volume.port.grpc="+p(3), "-volume.max=32",
		"-filer", "-filer.port="+p(4), "-filer.port.grpc="+p(5),
		"-s3", "-s3.port="+p(6), "-s3.port.grpc="+p(7), "-s3.config="+filepath.Join(dir, "s3.json"),
		"-s3.port.iceberg=0", "-s3.port.lance=0")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The server dies with the test binary: SIGKILL when the thread that
	// started it exits, and that thread is kept for the process's life.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			cmd.Wait() //nolint:errcheck
		}
		select {} // keep the locked thread alive
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("error starting %s: %w", bin, err)
	}

	s := &Server{Endpoint: "http://127.0.0.1:" + p(6), Dir: dir}
	s.Client = s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint), Region: Region, UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	})
	// Ready once the bucket can be created (the filer is up).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		_, err := s.Client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(Bucket)})
		if err == nil || strings.Contains(err.Error(), "BucketAlreadyOwnedByYou") || strings.Contains(err.Error(), "BucketAlreadyExists") {
			break
		}
		if ctx.Err() != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "weed.log"))
			if len(log) > 4000 {
				log = log[len(log)-4000:]
			}
			return nil, fmt.Errorf("SeaweedFS did not come up on %s: %v\n%s", s.Endpoint, err, log)
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	return s, nil
}
