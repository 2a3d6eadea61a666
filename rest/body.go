package rest

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/cryptointel/cryptointel"
)

// maxJSONBody is cryptointel.MaxBodyBytes as the 413 messages write it.
var maxJSONBody = cryptointel.MaxBodyText

// errUnsupportedMediaType is answered 415 directly (the error table has
// no code for it).
var errUnsupportedMediaType = errors.New("Content-Type must be application/json")

// readJSONBody is the body reader of the /v1 routes that take a JSON body:
// a Content-Type other than JSON (application/json or any +json type), or
// none, is errUnsupportedMediaType, a body over cryptointel.MaxBodyBytes is
// ETOOLARGE with tooLarge as its message, one that did not arrive within
// the body read timeout EBODYTIMEOUT (408), another unreadable one EINVALID
// with unreadable. Parsing the JSON is the caller's.
func readJSONBody(w http.ResponseWriter, r *http.Request, tooLarge, unreadable string) ([]byte, error) {
	// A missing Content-Type is refused like any other that is not JSON.
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil, errUnsupportedMediaType
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, cryptointel.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &cryptointel.Error{Code: cryptointel.ETOOLARGE, Message: tooLarge}
		}
		if cryptointel.ErrorCode(err) == cryptointel.EBODYTIMEOUT {
			return nil, err // the body came too late: 408
		}
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: unreadable}
	}
	return b, nil
}

// handleBodyError answers 415 itself and passes every other error on.
func handleBodyError(w http.ResponseWriter, err error) error {
	if errors.Is(err, errUnsupportedMediaType) {
		writeErrorBody(w, http.StatusUnsupportedMediaType, cryptointel.EMEDIATYPE, err.Error())
		return nil
	}
	return err
}
