package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/cryptointel/cryptointel/access"
)

// ChatGPT's deep-research pair (its connectors call tools of these names
// and shapes): search takes one string and answers result ids, titles
// and URLs; fetch takes one of those ids and answers the whole document.
// Both text contents are the JSON of the structured result, as ChatGPT
// reads them. The documents are events: search runs GET /v1/search, fetch
// reads the event through /graphql, like the event resource template.

// Tool names of the pair.
const (
	toolResearchSearch = "search"
	toolResearchFetch  = "fetch"
)

// MsgFetchIDFmt refuses a fetch id that is not an event id: the id as
// given (clipped).
const MsgFetchIDFmt = "id must be an event id as search returns it (digits, e.g. \"5016\"), got %q"

// MsgFetchNotFoundFmt is the tool error of a fetch of an event that does
// not exist: its id.
const MsgFetchNotFoundFmt = "No event with id %s: use an id from search."

// eventURIPrefix names an event by id (EventURITemplate): the url of a
// result or document whose event has no evidence link.
const eventURIPrefix = "cryptointel://events/"

// researchResultSchema is the schema of one search result.
func researchResultSchema() map[string]any {
	return objectSchema(
		member{"id", map[string]any{"type": "string", "description": "The event id, for fetch."}},
		member{"title", map[string]any{"type": "string", "description": "The event's title."}},
		member{"url", map[string]any{"type": "string", "description": "Its first evidence link, or its " + eventURIPrefix + "{id} resource."}},
	)
}

// researchSearchDef is ChatGPT's search.
var researchSearchDef = toolDef{
	Name: toolResearchSearch, Title: "Search (deep research)",
	Description: "Search radar and signal events about crypto organizations, tokens, people and protocols by words, names or tickers; " +
		"answers result ids, titles and urls, best first (the search ChatGPT's deep research and connectors call). " +
		"Read a result whole with fetch. search_events answers the same search with filters and whole events.",
	Routes: []string{routeSearch},
	Args: []argDef{
		{Name: "query", Description: "What to search for: words, an entity name or a ticker, e.g. \"ETH staking\" or \"Uniswap\"."},
	},
	Compose: func(a args, bodies [][]byte) []byte {
		out := researchResults{Results: []researchResult{}}
		gjson.GetBytes(bodies[0], "data").ForEach(func(_, e gjson.Result) bool {
			id := e.Get("id").Raw
			out.Results = append(out.Results, researchResult{ID: id, Title: e.Get("title").String(), URL: eventURL(e, id)})
			return true
		})
		return marshalPlain(out)
	},
	Output: func([]map[string]any) map[string]any {
		return objectSchema(member{"results", map[string]any{"type": "array", "items": researchResultSchema()}})
	},
	JSONText: true,
}

// researchFetchDef is ChatGPT's fetch.
var researchFetchDef = toolDef{
	Name: toolResearchFetch, Title: "Fetch (deep research)",
	Description: "One event whole, by an id search returned: its title, a text of its summary, points and evidence, " +
		"its url and metadata (category, significance, time, owners and participants). The fetch ChatGPT's deep research and connectors call.",
	Args: []argDef{
		{Name: "id", Param: "-", Required: true, Description: "An event id, as search returns it.",
			Schema: map[string]any{"type": "string"}},
	},
	Read: func(s *Server, ctx context.Context, info *requestInfo, authorization string, a args, pay *payment) (*routeResponse, []byte) {
		id := strings.TrimSpace(a.raw("id"))
		if n, err := strconv.ParseInt(id, 10, 32); err != nil || n < 1 {
			return refusal(http.StatusBadRequest, fmt.Sprintf(MsgFetchIDFmt, access.Clip(id))), nil
		}
		res, event := s.readEvent(ctx, info, authorization, id, pay)
		if res.status == http.StatusOK && (len(event) == 0 || string(event) == "null") {
			return refusal(http.StatusNotFound, fmt.Sprintf(MsgFetchNotFoundFmt, id)), nil
		}
		return res, event
	},
	Pricing: "Costs what its read of the event through /graphql costs (the operation's complexity in credits). " +
		"Without an API key, payable per call with x402 at /graphql's price.",
	Compose: func(a args, bodies [][]byte) []byte {
		e := gjson.ParseBytes(bodies[0])
		id := e.Get("id").Raw
		var text strings.Builder
		text.WriteString(e.Get("summary").String())
		if bullets := e.Get("bullets").Array(); len(bullets) > 0 {
			text.WriteString("\n")
			for _, bl := range bullets {
				text.WriteString("\n- " + bl.String())
			}
		}
		if ev := e.Get("evidence").Array(); len(ev) > 0 {
			text.WriteString("\n\nEvidence:")
			for _, p := range ev {
				text.WriteString("\n- " + p.Get("timestamp").String() + " " + p.Get("url").String() + ": " + p.Get("content").String())
			}
		}
		doc := researchDocument{ID: id, Title: e.Get("title").String(), Text: text.String(), URL: eventURL(e, id)}
		doc.Metadata.Category = e.Get("eventCategory").String()
		doc.Metadata.Subcategory = e.Get("eventSubcategory").String()
		doc.Metadata.Timestamp = e.Get("latestEvidenceTimestamp").String()
		if sig := e.Get("significance"); sig.Type == gjson.Number {
			doc.Metadata.Significance = json.RawMessage(sig.Raw)
		}
		doc.Metadata.Owners, doc.Metadata.Participants = labelsOf(e.Get("owners")), labelsOf(e.Get("participants"))
		return marshalPlain(doc)
	},
	Output: func([]map[string]any) map[string]any {
		str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
		labels := func(d string) map[string]any {
			return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": d}
		}
		return objectSchema(
			member{"id", str("The event id.")},
			member{"title", str("The event's title.")},
			member{"text", str("Its summary, points and evidence (time, link and text of each post).")},
			member{"url", str("Its first evidence link, or its " + eventURIPrefix + "{id} resource.")},
			member{"metadata", objectSchema(
				member{"category", str("The event category.")},
				member{"subcategory", str("The event subcategory.")},
				member{"timestamp", str("Its latest evidence time (ISO 8601).")},
				member{"significance", map[string]any{"type": []any{"number", "null"}, "description": "Its significance score; null for a radar event."}},
				member{"owners", labels("The display names of the entities that own it.")},
				member{"participants", labels("The display names of the other entities taking part.")},
			)},
		)
	},
	JSONText: true,
}

// eventURL is an event's url: its first evidence link, or its resource.
func eventURL(e gjson.Result, id string) string {
	if u := e.Get("evidence.0.url").String(); u != "" {
		return u
	}
	return eventURIPrefix + id
}

// researchResults is search's result.
type researchResults struct {
	Results []researchResult `json:"results"`
}

type researchResult struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

// researchDocument is fetch's result.
type researchDocument struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Text     string `json:"text"`
	URL      string `json:"url"`
	Metadata struct {
		Category     string          `json:"category"`
		Subcategory  string          `json:"subcategory"`
		Timestamp    string          `json:"timestamp"`
		Significance json.RawMessage `json:"significance"`
		Owners       []string        `json:"owners"`
		Participants []string        `json:"participants"`
	} `json:"metadata"`
}

// labelsOf returns the labels of a list of entity references.
func labelsOf(refs gjson.Result) []string {
	out := []string{}
	for _, r := range refs.Array() {
		out = append(out, r.Get("label").String())
	}
	return out
}

// marshalPlain is v's compact JSON, HTML characters unescaped.
func marshalPlain(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v) //nolint:errcheck // plain structs always encode
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// refusal is a read refused before it reached a route, as a route would
// answer it.
func refusal(status int, msg string) *routeResponse {
	body, _ := json.Marshal(map[string]string{"error": msg})
	return &routeResponse{status: status, header: http.Header{}, body: body}
}
