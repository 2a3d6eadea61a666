// Package cryptointel is the Go client of the cryptointel API.
//
// The route methods (one per /v1 route, on the embedded
// ClientWithResponses: typed parameters, typed results in JSON200) and the
// models are generated from the service's OpenAPI document
// (../openapi.json) by oapi-codegen, pinned in tools.mod; the rest is
// written by hand: credentials, retries with backoff honouring
// Retry-After, typed errors (*APIError, errors.Is(err, ErrNotFound)), the
// rate window and credits of the last response (LastMeta), cursor walks
// as iter.Seq2 (Walk, RadarAllItems …), /v1/stream with resume (Stream),
// GraphQL (Query), webhook verification (VerifyWebhook) and a pluggable
// x402 payer (WithPayer, X402Payer).
//
// Regenerate (no diff when the document is unchanged):
//
//	go generate ./...
package cryptointel

//go:generate go run -modfile=tools.mod github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config oapi-codegen.yaml ../openapi.json
//go:generate go run ./internal/routesgen ../openapi.json routes.gen.go
