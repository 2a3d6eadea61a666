package oauth

import (
	"bytes"
	"errors"
	"html/template"
	"net/http"
)

// The consent page: one self-contained HTML document (inline style, no
// script, nothing loaded from anywhere), never framed, never cached. The
// API key typed into it is posted once and never written back into a
// page.

// pageCSP allows the page's inline style and nothing else; the form posts
// to this server, which redirects to the client.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; frame-ancestors 'none'"

type scopeLine struct{ Name, Text string }

type pageData struct {
	Client       string
	ClientID     string
	RedirectHost string
	Scopes       []scopeLine
	RequestID    string
	CSRF         string
	Error        string
	// ErrorCode and Description make an error page.
	ErrorCode   string
	Description string
}

var pageTemplate = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{if .ErrorCode}}Authorization error{{else}}Connect {{.Client}} to cryptointel{{end}}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}.box{border:1px solid #ccc;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
.err{background:#fdecea;border-color:#e0a3a0}code{background:#f2f2f2;padding:0 .2rem;border-radius:3px}
input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;margin:.25rem 0 1rem}
button{font:inherit;padding:.5rem 1.2rem;margin-right:.5rem;border-radius:6px;border:1px solid #888;cursor:pointer}
button.ok{background:#1f6feb;color:#fff;border-color:#1f6feb}.muted{color:#555;font-size:.9rem}
</style></head><body>
{{if .ErrorCode}}
<h1>This authorization request cannot go on</h1>
<div class="box err"><p><code id="error-code">{{.ErrorCode}}</code></p><p id="error-description">{{.Description}}</p></div>
<p class="muted">Go back to the application and connect again.</p>
{{else}}
<h1><span id="client-name">{{.Client}}</span> wants to use your cryptointel account</h1>
<div class="box">
<p>Application: <strong>{{.Client}}</strong><br><span class="muted">client id <code>{{.ClientID}}</code></span></p>
<p>After you answer, you go back to <strong id="redirect-host">{{.RedirectHost}}</strong>.</p>
<p>It asks to:</p><ul id="scopes">{{range .Scopes}}<li><code>{{.Name}}</code> — {{.Text}}</li>{{end}}</ul>
<p class="muted">It will act as the API key you enter: same plan, rate limit and credits. Revoking or rotating that key disconnects it; you can also disconnect it from your connected clients.</p>
</div>
{{if .Error}}<div class="box err" id="error" role="alert">{{.Error}}</div>{{end}}
<form method="post" action="/oauth/authorize" autocomplete="off">
<input type="hidden" name="request_id" value="{{.RequestID}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<label for="api_key">API key of your account</label>
<input type="password" id="api_key" name="api_key" autocomplete="off" spellcheck="false" placeholder="ci_…">
<button type="submit" class="ok" name="action" value="approve" id="approve">Approve</button>
<button type="submit" name="action" value="deny" id="deny">Deny</button>
</form>
{{end}}
</body></html>
`))

func setPageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Type", "text/html; charset=utf-8")
}

func (s *Server) consentPage(w http.ResponseWriter, status int, d pageData) {
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, d); err != nil {
		s.logger.Error("error rendering the consent page", "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	setPageHeaders(w)
	w.WriteHeader(status)
	w.Write(buf.Bytes()) //nolint:errcheck
}

// errorPage shows an error that cannot be sent to the client's redirect
// URI: an *oauthError as itself, anything else as a logged server_error.
func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, err error) {
	var oe *oauthError
	if !errors.As(err, &oe) {
		s.logger.ErrorContext(r.Context(), "oauth internal error", "path", r.URL.Path, "error", err)
		oe = oerr(http.StatusInternalServerError, ErrServerError, "The authorization server could not answer; retry shortly.")
	}
	s.consentPage(w, oe.Status, pageData{ErrorCode: oe.Code, Description: oe.Description})
}
