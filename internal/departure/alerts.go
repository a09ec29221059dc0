package departure

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/farebox/farebox/internal/realtime"
)

// Service alerts (GTFS-Realtime Alerts). An alert applies to a board
// entry when one of its informed entities selects the entry's trip run,
// route, route type, agency or departure stop (the stop or its station) —
// every field an entity sets must match (direction_id is not in the
// timetable and is not checked) — and one of its active periods (none:
// always) contains the query's whole second. Alerts are resolved against
// the feed once per alerts snapshot (alertIndex, built when the poller
// stores the snapshot: Index.PrepareAlerts), so a board entry costs one
// bit test and a scan of the few (route, stop) pairs the board has seen
// (alertCtx.memo) when the feed has alerts, and one pointer load when it
// has none.

// AlertSource is implemented by a Realtime overlay that also has service
// alerts (*realtime.Hub does): the snapshot whose Alerts apply to a feed,
// nil when there are none or they are stale.
type AlertSource interface {
	Alerts(feedID string) *realtime.Snapshot
}

// Alert is one service alert as the API shows it: texts in the language
// picked from Accept-Language (else the feed's first translation), cause
// and effect as lower-case GTFS-RT enum names, periods in epoch ms.
type Alert struct {
	ID            string        `json:"id"`
	Header        string        `json:"header"`
	Description   string        `json:"description"`
	URL           string        `json:"url"`
	Cause         string        `json:"cause"`
	Effect        string        `json:"effect"`
	ActivePeriods []AlertPeriod `json:"active_periods"`
}

// AlertPeriod is an active period in epoch ms; null ends are open.
type AlertPeriod struct {
	Start *int64 `json:"start"`
	End   *int64 `json:"end"`
}

// alertSel is one informed entity resolved against the feed (-1: not set).
type alertSel struct {
	alert                     int32
	agency, route, stop, trip int32
	routeType                 int32
	day                       int32
}

// alertIndex is a feed's alerts snapshot resolved against its timetable.
type alertIndex struct {
	snap     *realtime.Snapshot
	alerts   []*realtime.Alert
	byAgency map[int32][]alertSel
	byRoute  map[int32][]alertSel
	byStop   map[int32][]alertSel
	byTrip   map[int32][]alertSel
	byType   []alertSel         // route_type only
	tripSel  []uint64           // bit per static trip: byTrip has selectors for it (nil: none)
	dayOff   bool               // no selector outside byTrip names a service day
	langs    []string           // languages of the translations, lower case
	views    map[string][]Alert // per language of langs and "": every alert's view

	lastLang atomic.Pointer[[2]string] // the last Accept-Language value and its language

	mu     sync.RWMutex
	combos map[string]*alertList // language, 0, alert numbers (uvarint) → the shared list
	bounds []int64               // every period start and end, sorted
}

// alertsOf is the feed's current alert index, nil without alerts.
func (ix *Index) alertsOf(fi *feedIndex) *alertIndex {
	if ix.alertSrc == nil {
		return nil
	}
	s := ix.alertSrc.Alerts(fi.id)
	if s == nil || len(s.Alerts) == 0 {
		return nil
	}
	if ai := fi.alerts.Load(); ai != nil && ai.snap == s {
		return ai
	}
	ai := fi.buildAlerts(s)
	fi.alerts.Store(ai)
	return ai
}

// alertCache holds the last alert index built for a feed.
type alertCache = atomic.Pointer[alertIndex]

func (fi *feedIndex) buildAlerts(s *realtime.Snapshot) *alertIndex {
	ai := &alertIndex{snap: s, alerts: s.Alerts, byAgency: map[int32][]alertSel{}, byRoute: map[int32][]alertSel{},
		byStop: map[int32][]alertSel{}, byTrip: map[int32][]alertSel{}, combos: map[string]*alertList{}, dayOff: true}
	lookup := func(m map[string]int32, id string) (int32, bool) {
		if id == "" {
			return -1, true
		}
		v, ok := m[id]
		return v, ok
	}
	agencies, routes := fi.agencyIdx(), fi.routeIdx()
	for a, al := range s.Alerts {
		for _, t := range [][]realtime.Translation{al.Header, al.Description, al.URL} {
			for _, tr := range t {
				if l := strings.ToLower(tr.Language); l != "" && !slices.Contains(ai.langs, l) {
					ai.langs = append(ai.langs, l)
				}
			}
		}
		for _, p := range al.Active {
			ai.bounds = append(ai.bounds, p.Start, p.End)
		}
		for _, e := range al.Entities {
			sel := alertSel{alert: int32(a), routeType: e.RouteType, day: e.StartDate}
			var ok [4]bool
			sel.agency, ok[0] = lookup(agencies, e.AgencyID)
			if !ok[0] && fi.soleAgency() {
				sel.agency, ok[0] = 0, true
			}
			sel.route, ok[1] = lookup(routes, e.RouteID)
			sel.stop, ok[2] = lookup(fi.stopIdx, e.StopID)
			sel.trip, ok[3] = lookup(fi.tripIdx, e.TripID)
			if ok != [4]bool{true, true, true, true} {
				continue // names something this feed does not have: selects nothing
			}
			if sel.trip < 0 && sel.day >= 0 {
				ai.dayOff = false
			}
			switch {
			case sel.trip >= 0:
				ai.byTrip[sel.trip] = append(ai.byTrip[sel.trip], sel)
				if ai.tripSel == nil {
					ai.tripSel = make([]uint64, (len(fi.f.Trips.ID)+63)/64)
				}
				ai.tripSel[sel.trip/64] |= 1 << (sel.trip % 64)
			case sel.stop >= 0:
				ai.byStop[sel.stop] = append(ai.byStop[sel.stop], sel)
			case sel.route >= 0:
				ai.byRoute[sel.route] = append(ai.byRoute[sel.route], sel)
			case sel.agency >= 0:
				ai.byAgency[sel.agency] = append(ai.byAgency[sel.agency], sel)
			default:
				ai.byType = append(ai.byType, sel)
			}
		}
	}
	slices.Sort(ai.bounds)
	ai.views = make(map[string][]Alert, len(ai.langs)+1)
	for _, l := range append([]string{""}, ai.langs...) {
		vs := make([]Alert, len(s.Alerts))
		for i, al := range s.Alerts {
			vs[i] = alertView(al, l)
		}
		ai.views[l] = vs
	}
	return ai
}

func (fi *feedIndex) agencyIdx() map[string]int32 {
	m := make(map[string]int32, len(fi.f.Agencies))
	for i, a := range fi.f.Agencies {
		m[a.ID] = int32(i)
	}
	return m
}

// soleAgency: a feed with one agency may leave its agency_id empty; then
// an alert's agency_id (whatever the producer calls it) means that agency.
func (fi *feedIndex) soleAgency() bool {
	return len(fi.f.Agencies) == 1 && fi.f.Agencies[0].ID == ""
}

func (fi *feedIndex) routeIdx() map[string]int32 {
	m := make(map[string]int32, len(fi.f.Routes))
	for i, r := range fi.f.Routes {
		m[r.ID] = int32(i)
	}
	return m
}

// stableWithin reports whether no active period starts or ends within
// [from, to] (whole seconds): the alerts active at any second of it are the same.
func (ai *alertIndex) stableWithin(from, to int64) bool {
	if ai == nil {
		return true
	}
	i, _ := slices.BinarySearch(ai.bounds, from)
	return i == len(ai.bounds) || ai.bounds[i] > to
}

// alertCtx is what a board or trip needs to attach alerts: the feed's
// alerts, the query second and the language, and the lists already found
// for this query.
type alertCtx struct {
	ai    *alertIndex
	at    int64
	lang  string
	nmemo int
	memo  [alertMemoSize]alertMemo
}

// alertMemo: the alerts of every run of route (-1: unknown) at stop on
// service day (0 when no selector outside byTrip names a day) whose trip
// has no selectors of its own. A board's entries share a few platforms and
// lines, so most entries find their list here without a map lookup.
type alertMemo struct {
	route, stop, day int32
	list             *alertList
}

// alertMemoSize bounds the pairs remembered per query (a scan of them is
// still cheaper than the lookups it saves).
const alertMemoSize = 16

// hasTripSel reports whether selectors name static trip t.
func (ai *alertIndex) hasTripSel(t int32) bool {
	return ai.tripSel != nil && ai.tripSel[t/64]&(1<<(t%64)) != 0
}

// forRun lists the alerts active at c.at that select the trip run k at
// stop (stop < 0: selectors naming a stop are not considered).
func (c *alertCtx) forRun(k tripKey, stop int32) *alertList {
	if c == nil || c.ai == nil {
		return nil
	}
	return c.forSel(k.fi, k.fi.f.Trips.Route[k.trip], k.trip, k.day, stop)
}

// forSel lists the alerts active at c.at that select a run of route
// (-1: unknown, then only agency-wide alerts of a one-agency feed and none
// by route or route type) and static trip (-1: a run that exists only in
// realtime) on service day, at stop (-1: none).
func (c *alertCtx) forSel(fi *feedIndex, r, trip, day, stop int32) *alertList {
	if c == nil || c.ai == nil {
		return nil
	}
	ai := c.ai
	if trip < 0 || !ai.hasTripSel(trip) {
		// Only the route, its agency and type, the stop and the day
		// decide (the trip selects nothing of its own).
		mday := day
		if ai.dayOff {
			mday = 0
		}
		for i := range c.memo[:c.nmemo] {
			if m := &c.memo[i]; m.route == r && m.stop == stop && m.day == mday {
				return m.list
			}
		}
		l := c.lookup(fi, r, trip, day, stop)
		if c.nmemo < alertMemoSize {
			c.memo[c.nmemo] = alertMemo{route: r, stop: stop, day: mday, list: l}
			c.nmemo++
		}
		return l
	}
	return c.lookup(fi, r, trip, day, stop)
}

// runSel is the run a selector must match (alertHits.add) and the
// stop's station (-1 without a stop).
func (c *alertCtx) runSel(fi *feedIndex, r, trip, day, stop int32) (alertSel, int32) {
	f := fi.f
	ctx := alertSel{agency: -2, route: -2, trip: -2, routeType: -2, day: day, stop: stop}
	if r >= 0 {
		ctx.agency, ctx.route, ctx.routeType = f.Routes[r].Agency, r, f.Routes[r].Type
	} else if len(f.Agencies) == 1 {
		ctx.agency = 0
	}
	if trip >= 0 {
		ctx.trip = trip
	}
	station := int32(-1)
	if stop >= 0 {
		station = fi.stationOf(stop)
	}
	return ctx, station
}

// lookup is forSel without the memo.
func (c *alertCtx) lookup(fi *feedIndex, r, trip, day, stop int32) *alertList {
	ai := c.ai
	ctx, station := c.runSel(fi, r, trip, day, stop)
	var hits alertHits
	if trip >= 0 && ai.hasTripSel(trip) {
		hits.add(ai, c.at, &ctx, station, ai.byTrip[trip])
	}
	if stop >= 0 && len(ai.byStop) > 0 {
		hits.add(ai, c.at, &ctx, station, ai.byStop[stop])
		if station != stop {
			hits.add(ai, c.at, &ctx, station, ai.byStop[station])
		}
	}
	if r >= 0 && len(ai.byRoute) > 0 {
		hits.add(ai, c.at, &ctx, station, ai.byRoute[r])
	}
	if ctx.agency >= 0 && len(ai.byAgency) > 0 {
		hits.add(ai, c.at, &ctx, station, ai.byAgency[ctx.agency])
	}
	hits.add(ai, c.at, &ctx, station, ai.byType)
	return c.list(hits.list())
}

// alertHits collects alert numbers without allocating for the usual few.
type alertHits struct {
	n     int
	small [8]int32
	more  []int32
}

func (h *alertHits) list() []int32 {
	if h.more != nil {
		return h.more
	}
	return h.small[:h.n]
}

func (h *alertHits) has(a int32) bool { return slices.Contains(h.list(), a) }

func (h *alertHits) push(a int32) {
	if h.more == nil && h.n < len(h.small) {
		h.small[h.n] = a
		h.n++
		return
	}
	if h.more == nil {
		h.more = append([]int32(nil), h.small[:]...)
	}
	h.more = append(h.more, a)
}

// add takes the selectors of sels that match the run ctx (at its stop or
// station; ctx.stop < 0: only selectors without a stop) and whose alert is
// active at second at.
func (h *alertHits) add(ai *alertIndex, at int64, ctx *alertSel, station int32, sels []alertSel) {
	for i := range sels {
		s := &sels[i]
		if (s.agency < 0 || s.agency == ctx.agency) && (s.route < 0 || s.route == ctx.route) &&
			(s.trip < 0 || s.trip == ctx.trip) && (s.routeType < 0 || s.routeType == ctx.routeType) &&
			(s.day < 0 || s.day == ctx.day) && (s.stop < 0 || ctx.stop >= 0 && (s.stop == ctx.stop || s.stop == station)) &&
			!h.has(s.alert) && ai.alerts[s.alert].ActiveAt(at) {
			h.push(s.alert)
		}
	}
}

// atStop lists the alerts active at c.at that select a run of route (-1:
// unknown) and static trip (-1: none) on service day at stop (the stop it
// is served at) through an entity naming a stop: the stop or its station
// alone, or with the run's route, trip, agency or route type. With
// forSel(…, -1), the run's alerts without a stop, they are exactly the
// alerts of the run's board entry at that stop, so a trip's stop shows
// what the board shows (TestTripAlertsAgreeWithBoards).
func (c *alertCtx) atStop(fi *feedIndex, r, trip, day, stop int32) []Alert {
	if c == nil || c.ai == nil || stop < 0 {
		return nil
	}
	ai := c.ai
	ctx, station := c.runSel(fi, r, trip, day, stop)
	var hits alertHits
	if trip >= 0 && ai.hasTripSel(trip) {
		for _, s := range ai.byTrip[trip] {
			if s.stop >= 0 {
				hits.add(ai, c.at, &ctx, station, []alertSel{s})
			}
		}
	}
	if len(ai.byStop) > 0 {
		hits.add(ai, c.at, &ctx, station, ai.byStop[stop])
		if station != stop {
			hits.add(ai, c.at, &ctx, station, ai.byStop[station])
		}
	}
	return c.list(hits.list()).get()
}

// alertList is a shared list of alert views and its JSON array, encoded
// once: a board entry copies the bytes instead of encoding the texts again
// (escaping them through encoding/json cost three times the board).
type alertList struct {
	views []Alert
	json  []byte
}

// get is the list's views, nil for none.
func (l *alertList) get() []Alert {
	if l == nil {
		return nil
	}
	return l.views
}

// list turns alert numbers into views in feed order. The views are built
// once per alerts snapshot and language, and each distinct list (with its
// JSON) once: the lists are shared between board entries and must not be
// modified.
func (c *alertCtx) list(hit []int32) *alertList {
	if len(hit) == 0 {
		return nil
	}
	slices.Sort(hit)
	var kb [64]byte
	key := append(append(kb[:0], c.lang...), 0)
	for _, a := range hit {
		key = binary.AppendUvarint(key, uint64(a))
	}
	ai := c.ai
	ai.mu.RLock()
	out, ok := ai.combos[string(key)]
	ai.mu.RUnlock()
	if ok {
		return out
	}
	vs := ai.views[c.lang]
	out = &alertList{views: make([]Alert, len(hit))}
	for i, a := range hit {
		out.views[i] = vs[a]
	}
	out.json = appendAlertsJSON(nil, out.views)
	ai.mu.Lock()
	if len(ai.combos) < maxAlertCombos {
		ai.combos[string(key)] = out
	}
	ai.mu.Unlock()
	return out
}

// maxAlertCombos bounds the distinct alert lists an alert index shares.
const maxAlertCombos = 4096

// alertView is an alert as the API shows it, texts in lang.
func alertView(al *realtime.Alert, lang string) Alert {
	v := Alert{ID: al.ID, Header: pick(al.Header, lang), Description: pick(al.Description, lang), URL: pick(al.URL, lang),
		Cause: al.Cause, Effect: al.Effect, ActivePeriods: make([]AlertPeriod, 0, len(al.Active))}
	for _, p := range al.Active {
		var ap AlertPeriod
		if p.Start != 0 {
			ap.Start = ptr(p.Start * 1000)
		}
		if p.End != 0 {
			ap.End = ptr(p.End * 1000)
		}
		v.ActivePeriods = append(v.ActivePeriods, ap)
	}
	return v
}

func ptr(v int64) *int64 { return &v }

// pick is the translation in lang (a language the feed has, lower case;
// the primary subtag also matches "en" ~ "en-us"), else the first.
func pick(ts []realtime.Translation, lang string) string {
	if len(ts) == 0 {
		return ""
	}
	if lang != "" {
		for _, t := range ts {
			if strings.EqualFold(t.Language, lang) {
				return t.Text
			}
		}
		for _, t := range ts {
			if primary(strings.ToLower(t.Language)) == primary(lang) {
				return t.Text
			}
		}
	}
	return ts[0].Text
}

func primary(tag string) string {
	p, _, _ := strings.Cut(tag, "-")
	return p
}

// language picks, from an Accept-Language header, the language of the
// feed's alert texts to show: the acceptable tag with the highest q that
// the feed has (exactly, else by primary subtag), "" for none (the first
// translation of each text is shown).
func (ai *alertIndex) language(accept string) string {
	if ai == nil || accept == "" || len(ai.langs) == 0 {
		return ""
	}
	if m := ai.lastLang.Load(); m != nil && m[0] == accept {
		return m[1] // clients send the same header again and again
	}
	lang := ai.parseLanguage(accept)
	ai.lastLang.Store(&[2]string{accept, lang})
	return lang
}

func (ai *alertIndex) parseLanguage(accept string) string {
	best, bestQ := "", 0.0
	for rest := accept; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		tag = strings.TrimSpace(tag)
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if tag == "" || tag == "*" || q <= bestQ {
			continue
		}
		for _, l := range ai.langs {
			if exact := strings.EqualFold(l, tag); exact || strings.EqualFold(primary(l), primary(tag)) {
				best, bestQ = l, q
				if exact {
					break
				}
			}
		}
	}
	return best
}

// alertCtxFor is the alert context of a query at second at, nil when the
// feed has no alerts.
func (ix *Index) alertCtxFor(fi *feedIndex, at int64, acceptLanguage string) *alertCtx {
	return ix.initAlertCtx(new(alertCtx), fi, at, acceptLanguage)
}

// initAlertCtx sets c up as alertCtxFor's context and returns it, or nil
// when the feed has no alerts; boards keep c on their stack.
func (ix *Index) initAlertCtx(c *alertCtx, fi *feedIndex, at int64, acceptLanguage string) *alertCtx {
	ai := ix.alertsOf(fi)
	if ai == nil {
		return nil
	}
	c.ai, c.at, c.lang, c.nmemo = ai, at, ai.language(acceptLanguage), 0
	return c
}

// PrepareAlerts resolves the current alerts snapshot of feedID against its
// timetable now, and indexes the current TripUpdates' extra runs, platform
// changes and long delays (addedOf), so that the first board after a poll
// does not pay for them (pollers call it after storing a snapshot).
// Unknown feeds are ignored.
func (ix *Index) PrepareAlerts(feedID string) {
	if fi := ix.byID[feedID]; fi != nil {
		ix.alertsOf(fi)
		ix.addedOf(fi, ix.snapshot(fi))
	}
}
