package console_test

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/console"
	"github.com/farebox/farebox/internal/idempotency"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestConsoleJobs drives the console's job use cases on both engines: a
// bad state or job id is refused (422) naming the field and changes nothing, a
// ready job is listed and counted, and the catalog list of an empty
// catalog is empty.
func TestConsoleJobs(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
		empty, err := catalog.NewIndex(&catalog.File{Version: catalog.FormatVersion})
		if err != nil {
			t.Fatal(err)
		}
		woken := 0
		c := console.New(store.NewView[console.Queries](s), clocktest.NewFixed(now), func() *catalog.Index { return empty }, func() { woken++ })
		field := func(err error) string {
			if e := apperr.As(err); e != nil && e.Kind == apperr.Unprocessable && len(e.Details) == 1 {
				return e.Code + " " + e.Details[0].Field
			}
			return ""
		}
		if _, _, err := c.Jobs(ctx, "sleeping"); field(err) != console.CodeInvalidJobState+" state" {
			t.Errorf("bad state: %v", err)
		}
		for _, id := range []string{"0", "-1", "x", "١"} {
			if _, err := c.RetryDeadJob(ctx, idempotency.Claim{}, id); field(err) != console.CodeInvalidJobID+" job_id" {
				t.Errorf("job id %q: %v", id, err)
			}
		}
		if woken != 0 {
			t.Errorf("a refused retry woke the workers %d times", woken)
		}
		if err := s.Write(ctx, func(q store.Q) error {
			return q.EnqueueJob(ctx, jobs.NewJob{Kind: "console.test", Payload: "Ω 東京"}, now)
		}); err != nil {
			t.Fatal(err)
		}
		list, counts, err := c.Jobs(ctx, jobs.StateReady)
		if err != nil || len(list) != 1 || list[0].Kind != "console.test" || list[0].State != jobs.StateReady || list[0].LastError != "" || counts[jobs.StateReady] != 1 {
			t.Fatalf("Jobs = %+v %v %v", list, counts, err)
		}
		if dead, _, err := c.Jobs(ctx, jobs.StateDead); err != nil || len(dead) != 0 {
			t.Fatalf("dead jobs = %+v %v", dead, err)
		}
		if p := c.Catalog(); len(p) != 0 {
			t.Errorf("empty catalog lists %+v", p)
		}
	})
}

// at is where the console's clock stands in the tests below.
var at = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// consoleOf is the console of s with the default catalog, counting how
// often it wakes the workers.
func consoleOf(t *testing.T, s *store.Store, woken *int) (*console.Service, *catalog.Index) {
	t.Helper()
	f, err := catalog.Default("farebox")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := catalog.NewIndex(f)
	if err != nil {
		t.Fatal(err)
	}
	return console.New(store.NewView[console.Queries](s), clocktest.NewFixed(at), func() *catalog.Index { return ix }, func() { *woken++ }), ix
}

// TestConsoleRetryDeadJob: only a dead job is made ready again (with a
// fresh count of attempts, due at the console's time, its last error
// kept); the largest job id is looked up, one more is refused; of two
// retries of one dead job at once exactly one succeeds; the workers are
// woken once per retry that succeeded.
func TestConsoleRetryDeadJob(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		woken := 0
		c, _ := consoleOf(t, s, &woken)
		if err := s.Write(ctx, func(q store.Q) error {
			return q.EnqueueJobs(ctx, []jobs.NewJob{{Kind: "a"}, {Kind: "b"}, {Kind: "c"}}, at.Add(-time.Hour))
		}); err != nil {
			t.Fatal(err)
		}
		claimed, err := s.Jobs().Claim(ctx, "w", at.Add(-time.Hour), time.Minute, 10)
		if err != nil || len(claimed) != 3 {
			t.Fatalf("claimed %+v, %v", claimed, err)
		}
		failure := "失败 ☠ فشل כישלון"
		dead, ready, done := claimed[0].ID, claimed[1].ID, claimed[2].ID
		for _, err := range []error{
			s.Jobs().Retry(ctx, dead, "w", at.Add(-time.Hour), at.Add(-time.Hour), failure, true),
			s.Jobs().Retry(ctx, ready, "w", at.Add(-time.Hour), at.Add(time.Hour), "later", false),
			s.Jobs().Complete(ctx, done, "w", at.Add(-time.Hour)),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		list, counts, err := c.Jobs(ctx, jobs.StateDead)
		if err != nil || len(list) != 1 || list[0].ID != dead || list[0].LastError != failure || list[0].Attempts != 1 ||
			counts[jobs.StateDead] != 1 || counts[jobs.StateReady] != 1 || counts[jobs.StateDone] != 1 {
			t.Fatalf("dead jobs %+v, counts %v, %v", list, counts, err)
		}
		for id, want := range map[string]apperr.Kind{
			strconv.FormatInt(ready, 10): apperr.NotFound, strconv.FormatInt(done, 10): apperr.NotFound,
			"9223372036854775807": apperr.NotFound, "9223372036854775808": apperr.Unprocessable,
		} {
			if _, err := c.RetryDeadJob(ctx, idempotency.Claim{}, id); apperr.KindOf(err) != want {
				t.Errorf("retry of job %s: %v, want %v", id, err, want)
			}
		}
		results := make(chan error)
		for range 2 {
			go func() {
				_, err := c.RetryDeadJob(ctx, idempotency.Claim{}, strconv.FormatInt(dead, 10))
				results <- err
			}()
		}
		if a, b := <-results, <-results; (a == nil) == (b == nil) || apperr.KindOf(a) != apperr.NotFound && apperr.KindOf(b) != apperr.NotFound || woken != 1 {
			t.Fatalf("twin retries: %v and %v, woken %d", a, b, woken)
		}
		list, _, err = c.Jobs(ctx, jobs.StateReady)
		if err != nil || len(list) != 2 || list[1].ID != dead || list[1].Attempts != 0 || !list[1].RunAt.Equal(at) || list[1].LastError != failure {
			t.Fatalf("ready jobs %+v, %v", list, err)
		}
	})
}

// TestConsoleJobLimit: the console lists the newest AdminJobLimit jobs,
// newest first, and counts them all.
func TestConsoleJobLimit(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		woken := 0
		c, _ := consoleOf(t, s, &woken)
		js := make([]jobs.NewJob, console.AdminJobLimit+1)
		for i := range js {
			js[i] = jobs.NewJob{Kind: "console.limit"}
		}
		if err := s.Write(ctx, func(q store.Q) error { return q.EnqueueJobs(ctx, js, at) }); err != nil {
			t.Fatal(err)
		}
		list, counts, err := c.Jobs(ctx, "")
		if err != nil || len(list) != console.AdminJobLimit || counts[jobs.StateReady] != console.AdminJobLimit+1 {
			t.Fatalf("%d jobs listed, counts %v, %v", len(list), counts, err)
		}
		if !sort.SliceIsSorted(list, func(i, j int) bool { return list[i].ID > list[j].ID }) || list[0].ID-list[len(list)-1].ID != console.AdminJobLimit-1 {
			t.Errorf("not the newest first: ids %d … %d", list[0].ID, list[len(list)-1].ID)
		}
	})
}

// TestConsoleAccounts: every account is listed with its keys (revoked
// ones too, never a secret), its dashboard users and its grants sorted;
// the catalog's products by area and name with their prices.
func TestConsoleAccounts(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		woken := 0
		c, ix := consoleOf(t, s, &woken)
		last := ix.File().Products[len(ix.File().Products)-1].ID
		first := ix.File().Products[0].ID
		revoked := at.Add(time.Minute)
		if err := s.Write(ctx, func(q store.Q) error {
			for i, name := range []string{"Verkehrsverbund عربى", "東京 🚆 שלום"} {
				id := "acc_" + string(rune('1'+i))
				if err := q.CreateAccount(ctx, account.Account{ID: id, Name: name, CreatedAt: at.Add(time.Duration(i) * time.Second)}); err != nil {
					return err
				}
			}
			_, _, hash := account.NewKey(account.Live)
			if err := q.CreateKey(ctx, account.Key{ID: "key_1", AccountID: "acc_1", Prefix: "fbx_live_AAAAAAAA", Environment: account.Live, CreatedAt: at}, hash); err != nil {
				return err
			}
			if err := q.RevokeAccountKey(ctx, "acc_1", account.Live, "key_1", revoked); err != nil {
				return err
			}
			if err := q.UpsertCatalog(ctx, ix.File(), at); err != nil {
				return err
			}
			for _, p := range []string{last, first} {
				if err := q.GrantProduct(ctx, "acc_1", p, at); err != nil {
					return err
				}
			}
			return q.SetDashboardUser(ctx, "用户@例子.中国", "acc_1", "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$"+strings.Repeat("A", 43), at)
		}); err != nil {
			t.Fatal(err)
		}
		accs, err := c.Accounts(ctx)
		if err != nil || len(accs) != 2 || accs[0].Name != "Verkehrsverbund عربى" || accs[1].Name != "東京 🚆 שלום" || len(accs[1].Keys)+len(accs[1].Users)+len(accs[1].Grants) != 0 {
			t.Fatalf("Accounts = %+v, %v", accs, err)
		}
		a := accs[0]
		if len(a.Keys) != 1 || a.Keys[0].Prefix != "fbx_live_AAAAAAAA" || a.Keys[0].Environment != "live" || a.Keys[0].RevokedAt == nil || !a.Keys[0].RevokedAt.Equal(revoked) {
			t.Errorf("keys %+v", a.Keys)
		}
		if len(a.Users) != 1 || a.Users[0].Email != "用户@例子.中国" {
			t.Errorf("users %+v", a.Users)
		}
		if want := []string{first, last}; len(a.Grants) != 2 || !sort.StringsAreSorted(a.Grants) || a.Grants[0] != min(want[0], want[1]) {
			t.Errorf("grants %v", a.Grants)
		}
		ps := c.Catalog()
		if len(ps) != len(ix.File().Products) || !sort.SliceIsSorted(ps, func(i, j int) bool {
			return ps[i].Area < ps[j].Area || ps[i].Area == ps[j].Area && ps[i].Name < ps[j].Name
		}) {
			t.Fatalf("catalog %+v", ps)
		}
		for _, p := range ps {
			pr, _ := ix.Product(p.ID)
			if p.Price != pr.PriceInCents.Decimal()+" "+pr.Currency || p.Area == "" || p.Restricted != pr.Restricted {
				t.Errorf("product %+v", p)
			}
		}
	})
}
