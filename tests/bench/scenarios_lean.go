package main

import "net/http"

// The lean event shape (legacy=false): the /v1/latest page of the core
// rows without the events' legacy aliases, measured right after them so
// the two compare in bytes per response, req/s and CPU.

func init() { registerScenarios(10, leanScenarios) }

func leanScenarios(*fixtures) []scenario {
	return []scenario{
		{name: "GET /v1/latest?limit=25&legacy=false", key: true, next: func(*worker) (*http.Request, error) {
			return http.NewRequest(http.MethodGet, "/v1/latest?limit=25&legacy=false", nil)
		}},
	}
}
