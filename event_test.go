package cryptointel_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
)

// An event's entity refs split by role: owners are RoleOwner's, every other
// role's refs are participants, each list in the order the refs came.
func TestAppendByRole(t *testing.T) {
	var owners, participants []string
	for _, r := range []struct{ role, ref string }{
		{cryptointel.RoleParticipant, "p1"}, {cryptointel.RoleOwner, "o1"}, {cryptointel.RoleParticipant, "p2"}, {cryptointel.RoleOwner, "o2"},
	} {
		cryptointel.AppendByRole(&owners, &participants, r.role, r.ref)
	}
	require.Equal(t, []string{"o1", "o2"}, owners)
	require.Equal(t, []string{"p1", "p2"}, participants)
}
