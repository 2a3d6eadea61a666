package resolvers

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel/access"
)

// postTransport is GraphQL over HTTP's POST (gqlgen's transport.POST: the
// same media types, statuses and errors) with the response written as the
// executor produced it. gqlgen writes a response with json.Marshal, which
// compacts and HTML-escapes the data again, byte by byte, although the
// executor wrote it compact and HTML-safe already (graph.FastSchema); that
// second pass was about a seventh of a /graphql request's CPU. The bytes
// are json.Marshal's (TestPostTransportWritesAsJSONMarshal). It takes
// every application/json POST that is not a WebSocket upgrade.
type postTransport struct{ transport.POST }

var _ graphql.Transport = postTransport{}

// Supports implements graphql.Transport.
func (postTransport) Supports(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && mt == "application/json" && !access.IsWebSocketUpgrade(r)
}

// Media types of a GraphQL response.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// Do serves one POST request, as transport.POST does.
func (t postTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	contentType := responseMediaType(r)
	w.Header().Set("Content-Type", contentType)
	start := graphql.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeResponse(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("could not read request body: %+v", err)}))
		return
	}
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		gqlErr := gqlerror.Errorf("json request body could not be decoded: %+v body:%s", err, string(body))
		writeResponse(w, exec.DispatchError(ctx, gqlerror.List{gqlErr}))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	opCtx, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		if errcode.GetErrorKind(opErr) == errcode.KindProtocol {
			if contentType == mediaGraphQLResponse {
				w.WriteHeader(http.StatusBadRequest)
			} else {
				w.WriteHeader(http.StatusUnprocessableEntity)
			}
		}
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), opErr))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	writeResponse(w, responses(ctx))
}

// responseMediaType is the media type of the response to r, chosen from
// its Accept header as transport.POST chooses it (without
// UseGrapQLResponseJsonByDefault): application/json unless the client
// prefers application/graphql-response+json or names neither.
func responseMediaType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return mediaJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*", mediaJSON:
			return mediaJSON
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		}
	}
	return mediaGraphQLResponse
}

// writeResponse writes resp as json.Marshal would, with its data copied as
// it is: the executor's data is compact and HTML-escaped already.
//
// The response is whole before it is written, so it says its length: a
// body of more than net/http's 2 KB buffer would otherwise go out chunked,
// one write to the connection more, and a client could not size its
// buffer. (A layer below that replaces the body, an access refusal or a
// paid request's dropped data, removes the length.)
func writeResponse(w http.ResponseWriter, resp *graphql.Response) {
	// Sized for the data and the envelope, so that appending them makes
	// one buffer, not one for the data and another for the closing brace.
	var b []byte
	if resp != nil {
		b = make([]byte, 0, len(resp.Data)+32)
	}
	b = appendResponse(b, resp)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b) //nolint:errcheck
}

// appendResponse appends resp's JSON to b.
func appendResponse(b []byte, resp *graphql.Response) []byte {
	if resp == nil || resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
		// Not a whole query's response: let encoding/json write it.
		out, err := json.Marshal(resp)
		if err != nil {
			panic(err) // as gqlgen's writeJson does
		}
		return append(b, out...)
	}
	b = append(b, '{')
	if len(resp.Errors) > 0 {
		errs, err := json.Marshal(resp.Errors)
		if err != nil {
			panic(err)
		}
		b = append(b, `"errors":`...)
		b = append(b, errs...)
		b = append(b, ',')
	}
	b = append(b, `"data":`...)
	if len(resp.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, resp.Data...)
	}
	if len(resp.Extensions) > 0 {
		ext, err := json.Marshal(resp.Extensions)
		if err != nil {
			panic(err)
		}
		b = append(b, `,"extensions":`...)
		b = append(b, ext...)
	}
	return append(b, '}')
}
