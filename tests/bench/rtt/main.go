// Command rtt measures, one request at a time, the latency floor of the
// machine the benchmarks run on: a PostgreSQL round trip (pgx, a cached
// statement), and a loopback HTTP GET of 4 KB whose handler sends 0 to 3
// trivial statements in sequence — what a request of that many statements
// costs before it does any work (tests/bench/NOTES.md).
//
//	go run ./tests/bench/rtt postgres://…/cryptointel_bench
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

func pct(d []time.Duration, p float64) time.Duration {
	slices.Sort(d)
	return d[int(float64(len(d)-1)*p)]
}

func main() {
	ctx := context.Background()
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rtt DATABASE_URL")
		os.Exit(2)
	}
	pool, err := pgxpool.New(ctx, os.Args[1])
	if err != nil {
		panic(err)
	}
	const n = 4000
	var one int
	lat := make([]time.Duration, 0, n)
	for i := 0; i < n+500; i++ {
		t := time.Now()
		if err := pool.QueryRow(ctx, "SELECT $1::int", i).Scan(&one); err != nil {
			panic(err)
		}
		if i >= 500 {
			lat = append(lat, time.Since(t))
		}
	}
	fmt.Printf("pgx SELECT $1 round trip: p50 %v p90 %v\n", pct(lat, 0.5), pct(lat, 0.9))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { //nolint:errcheck,gosec // ends with the process
		k, _ := strconv.Atoi(r.URL.Query().Get("n"))
		for j := 0; j < k; j++ {
			if err := pool.QueryRow(r.Context(), "SELECT $1::int", j).Scan(&one); err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
		}
		w.Write(make([]byte, 4096)) //nolint:errcheck
	}))
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for _, k := range []int{0, 1, 2, 3} {
		lat = lat[:0]
		for i := 0; i < n+500; i++ {
			t := time.Now()
			resp, err := c.Get("http://" + ln.Addr().String() + "/?n=" + strconv.Itoa(k))
			if err != nil {
				panic(err)
			}
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			if i >= 500 {
				lat = append(lat, time.Since(t))
			}
		}
		fmt.Printf("HTTP GET (4 KB) with %d statements in sequence: p50 %v p90 %v\n", k, pct(lat, 0.5), pct(lat, 0.9))
	}
}
