package credentials

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/keyref/tokentest"
)

// TestInspectionInToken keeps the inspection keys in a SoftHSM2 token:
// generated there on the first start, a ticket signed through the token
// verifies with the published key set alone, rotation ahead and at once,
// removal, a restart reads the same keys, and a wrong PIN or a missing
// token is a configuration error naming --inspection-keys.
func TestInspectionInToken(t *testing.T) {
	tk := tokentest.New(t)
	ctx := context.Background()
	ref := "pkcs11:token=" + tk.Label + "?module-path=" + tokentest.Module + "&pin-value=" + tk.PIN
	s := Settings{InspectionKeys: ref}
	now := time.Now()
	if _, _, _, err := LoadInspection(ctx, s, nil, now, false); apperr.KindOf(err) != apperr.NotFound {
		t.Fatalf("an empty token without create: %v", err)
	}
	kr, src, created, err := LoadInspection(ctx, s, nil, now, true)
	if err != nil || !created || src != SourceToken {
		t.Fatalf("first start: %v created=%v source=%s", err, created, src)
	}
	if ids := kr.IDs(); len(ids) != 2 || ids[0] != 1 || ids[1] != barcode.TestKeyIDBase+1 {
		t.Fatalf("ids %v", ids)
	}
	published, err := barcode.ParseKeySet([]byte(publicKeys(t, kr)))
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{barcode.EnvLive, barcode.EnvTest} {
		c := barcode.Claims{TicketID: "farebox-ticket-1", ProductID: "farebox-product-1", ProductName: "Deutschlandticket ü 🚆 تذكرة",
			ValidFrom: now.Truncate(time.Second).UTC(), ValidUntil: now.Add(time.Hour).Truncate(time.Second).UTC(), FirstName: "Zoë", LastName: "李", Environment: env}
		p, kid, err := barcode.SignWith(c, kr, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := barcode.Verify(p, published)
		if err != nil || got.KeyID != kid || got.LastName != "李" {
			t.Fatalf("%s ticket signed in the token: %v %+v", env, err, got)
		}
	}
	again, _, created, err := LoadInspection(ctx, s, nil, now, true)
	if err != nil || created || publicKeys(t, again) != publicKeys(t, kr) {
		t.Fatalf("restart changed the keys: %v created=%v", err, created)
	}
	ahead, err := RotateInspection(ctx, s, nil, barcode.EnvLive, now, now.Add(48*time.Hour))
	if err != nil || ahead.ID != 2 {
		t.Fatalf("rotate ahead: %v %v", ahead.ID, err)
	}
	kr, _, _, err = LoadInspection(ctx, s, nil, now, false)
	if a, _ := kr.ActiveFor(barcode.EnvLive); err != nil || a.ID != 1 || !kr.Pending(2, now) {
		t.Fatalf("key 2 published ahead: active %d pending %v %v", a.ID, kr.Pending(2, now), err)
	}
	kr, _, _, err = LoadInspection(ctx, s, nil, now.Add(49*time.Hour), false)
	if a, _ := kr.ActiveFor(barcode.EnvLive); err != nil || a.ID != 2 {
		t.Fatalf("after its instant key 2 signs: %d %v", a.ID, err)
	}
	if k, err := RotateInspection(ctx, s, nil, barcode.EnvLive, now, time.Time{}); err != nil || k.ID != 3 || k.Signer == nil {
		t.Fatalf("rotate at once: %v %v", k.ID, err)
	}
	if removed, err := RemoveInspectionKey(ctx, s, nil, 1); err != nil || !removed {
		t.Fatalf("remove: %v %v", removed, err)
	}
	if removed, err := RemoveInspectionKey(ctx, s, nil, 1); err != nil || removed {
		t.Fatalf("remove again: %v %v", removed, err)
	}
	kr, _, _, err = LoadInspection(ctx, s, nil, now, false)
	if _, has := kr.Lookup(1); err != nil || has {
		t.Fatalf("key 1 still loads: %v", err)
	}
	if a, _ := kr.ActiveFor(barcode.EnvLive); a.ID != 3 {
		t.Fatalf("active %d, want 3", a.ID)
	}
	for name, bad := range map[string]string{
		"missing token": strings.Replace(ref, "token="+tk.Label, "token=gone", 1),
		"wrong PIN":     strings.Replace(ref, "pin-value="+tk.PIN, "pin-value=9999", 1),
	} {
		_, _, _, err := LoadInspection(ctx, Settings{InspectionKeys: bad}, nil, now, true)
		if e := apperr.As(err); e == nil || e.Code != CodeInvalidConfiguration || !strings.Contains(e.Msg, "--inspection-keys") || strings.Contains(e.Msg, "9999") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
