package mcp

import "github.com/cryptointel/cryptointel/graph/jsonw"

// A route called in process hands over, with its body, the spans of the
// object elements of the lists nested in its operation's data, as the
// executor recorded them while writing them (RouteAnswer.Spans): a page's
// events, each event's owners, participants and evidence items, in the
// order they end. sameEvent reads the first evidence item to its url and
// an entity ref to its label and id; what follows in the item, and the
// evidence items after the first, it steps over with their spans instead
// of reading them to their end (every string searched for its closing
// quote). An element without a span (a body from the response cache, a
// composed result) is read as before, so the spans change what the pass
// costs, never what it writes.

// spanCursor finds the spans of the elements a pass asks for in order.
type spanCursor struct {
	spans []jsonw.Span
	// next is the first span not passed yet.
	next int
	// from and to are the span found last: an element inside it was
	// passed with it.
	from, to int32
}

// end returns the end of the element starting at i, 0 when no span is
// known for it. The spans come in the order their elements end, so an
// element's span follows those of the elements inside it and precedes
// those of the elements it is in: the cursor passes the spans of the
// elements before it and inside it, and stops at one it is in, where an
// element without a span leaves it.
func (c *spanCursor) end(i int) int {
	p := int32(i)
	if c.next >= len(c.spans) || (p > c.from && p < c.to) {
		return 0
	}
	for k := c.next; k < len(c.spans); k++ {
		s := c.spans[k]
		if s.Start == p {
			c.next, c.from, c.to = k+1, s.Start, s.End
			return int(s.End)
		}
		if s.Start < p && s.End > p {
			c.next = k // an element this one is in: none for it
			return 0
		}
	}
	c.next = len(c.spans)
	return 0
}
