package rest

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/observe"
)

// StatusOf returns the HTTP status for a domain error code, from the one
// error table (httperr.Table); unknown codes are 500. Every /v1
// handler — graph reads, webhooks, export jobs, usage — goes through it.
func StatusOf(code string) int { return httperr.Status(code) }

// ErrorBody is the JSON body of every error response (see
// httperr.Body).
type ErrorBody = httperr.Body

// WriteError writes err as a JSON error response: the status from the code
// table, the message of its *cryptointel.Error, or a generic message for any other
// error (which is logged with the request id, never shown).
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	code := cryptointel.ErrorCode(err)
	status := StatusOf(code)
	msg := cryptointel.ErrorMessage(err)
	var de *cryptointel.Error
	if !errors.As(err, &de) || status >= 500 {
		logger := loggerFrom(r.Context())
		logger.ErrorContext(r.Context(), "request failed",
			slog.String("request_id", observe.RequestID(r.Context())),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.String("code", code),
			slog.Any("error", err))
	}
	if status == http.StatusInternalServerError {
		msg = cryptointel.MsgInternal
	}
	writeErrorBody(w, status, code, msg)
}

// writeErrorBody writes the error body of code and msg with status: the
// message, and the code, parameter, link and request id a program acts
// on. Every error /v1 answers is written here.
func writeErrorBody(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, httperr.NewBody(code, msg, w.Header().Get(observe.RequestIDHeader)))
}

// writeJSON encodes v as the response body with status. An error body
// written without its code (ErrorBody{Error: msg}) gets the code of its
// status, its link and the request id, as writeErrorBody would write it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if e, ok := v.(ErrorBody); ok && e.Code == "" {
		v = httperr.NewBody(httperr.CodeForStatus(status, e.Error), e.Error, w.Header().Get(observe.RequestIDHeader))
	}
	b, err := encodeJSON(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"` + cryptointel.MsgInternal + `","code":"` + cryptointel.EINTERNAL + `","docUrl":"` + httperr.DocURL(cryptointel.EINTERNAL) + "\"}\n")
	}
	writeBody(w, status, b)
}

// writeResponse is writeJSON for a handler: it reports nothing, so a
// handler can end with return writeResponse(...).
func writeResponse(w http.ResponseWriter, status int, v any) error {
	writeJSON(w, status, v)
	return nil
}

// encodeJSON encodes v as a response body: compact JSON and a newline.
func encodeJSON(v any) ([]byte, error) {
	var (
		b   []byte
		err error
	)
	if o, ok := v.(object); ok {
		// Already compact and escaped as json.Marshal would write it; its
		// Marshal would only scan it all again.
		b, err = o.MarshalJSON()
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeBody writes an encoded JSON body (see encodeJSON).
func writeBody(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck
}
