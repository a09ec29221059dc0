package gtfs

import (
	"errors"
	"fmt"
	"time"
)

// validate checks the internal consistency a decoded snapshot must have so
// that index code can trust every cross reference without bounds checks
// failing at query time.
func (f *Feed) validate() error {
	if _, err := time.LoadLocation(f.Timezone); err != nil || f.Timezone == "" {
		return fmt.Errorf("unknown time zone %q", f.Timezone)
	}
	if len(f.Agencies) == 0 {
		return errors.New("no agency")
	}
	s := &f.Stops
	ns := len(s.ID)
	if len(s.Code) != ns || len(s.Name) != ns || len(s.Platform) != ns || len(s.Lat) != ns || len(s.Lon) != ns || len(s.Type) != ns || len(s.Parent) != ns {
		return errors.New("stop columns differ in length")
	}
	for i, p := range s.Parent {
		if p < -1 || int(p) >= ns || int(p) == i || s.Type[i] > StopBoardingArea {
			return errors.New("bad stop parent or type")
		}
	}
	for _, r := range f.Routes {
		if r.Agency < 0 || int(r.Agency) >= len(f.Agencies) {
			return errors.New("route with a bad agency")
		}
	}
	if len(f.Strings) == 0 || f.Strings[0] != "" {
		return errors.New("string table must start with the empty string")
	}
	t := &f.Trips
	nt := len(t.ID)
	if len(t.Route) != nt || len(t.Service) != nt || len(t.Headsign) != nt || len(t.ShortName) != nt || len(t.First) != nt+1 {
		return errors.New("trip columns differ in length")
	}
	for i := 0; i < nt; i++ {
		if t.Route[i] < 0 || int(t.Route[i]) >= len(f.Routes) || t.Service[i] < 0 || int(t.Service[i]) >= len(f.Services) {
			return errors.New("trip with a bad route or service")
		}
	}
	st := &f.StopTimes
	n := len(st.Stop)
	if len(st.Arrival) != n || len(st.Departure) != n || len(st.Sequence) != n || len(st.Flags) != n ||
		(st.Headsign != nil && len(st.Headsign) != n) || (st.Track != nil && len(st.Track) != n) {
		return errors.New("stop time columns differ in length")
	}
	if nt >= 0 && (len(t.First) == 0 || t.First[0] != 0 || int(t.First[nt]) != n) {
		return errors.New("trip ranges do not cover the stop times")
	}
	for i := 0; i < nt; i++ {
		if t.First[i] > t.First[i+1] {
			return errors.New("trip ranges are not monotonic")
		}
	}
	for i := 0; i < n; i++ {
		if st.Stop[i] < 0 || int(st.Stop[i]) >= ns || st.Arrival[i] < 0 || st.Departure[i] < st.Arrival[i] {
			return errors.New("bad stop time")
		}
		if st.Headsign != nil && int(st.Headsign[i]) >= len(f.Strings) || st.Track != nil && int(st.Track[i]) >= len(f.Strings) {
			return errors.New("bad string reference")
		}
	}
	sh := &f.Shapes
	nsh := len(sh.ID)
	if nsh > 0 || sh.First != nil {
		if len(sh.First) != nsh+1 || sh.First[0] != 0 || int(sh.First[nsh]) != len(sh.Lat) || len(sh.Lat) != len(sh.Lon) {
			return errors.New("shape ranges do not cover the shape points")
		}
		for i := 0; i < nsh; i++ {
			if sh.First[i] > sh.First[i+1] {
				return errors.New("shape ranges are not monotonic")
			}
		}
	}
	if t.Shape != nil && len(t.Shape) != nt {
		return errors.New("trip columns differ in length")
	}
	for _, s := range t.Shape {
		if s < -1 || int(s) >= nsh {
			return errors.New("trip with a bad shape")
		}
	}
	for _, fr := range f.Frequencies {
		if fr.Trip < 0 || int(fr.Trip) >= nt || fr.Headway <= 0 || fr.End <= fr.Start || fr.Start < 0 {
			return errors.New("bad frequency")
		}
	}
	return nil
}
