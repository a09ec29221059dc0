package config

import (
	"io"
	"strings"
	"testing"
)

// TestRecordsCatchUpSetting: the scheduled records export's catch-up
// window is 7 days unless set (flag or environment); 0, more than a year
// and anything but a whole number stop the start naming the flag.
func TestRecordsCatchUpSetting(t *testing.T) {
	none := func(string) string { return "" }
	if got, err := Load(nil, none, io.Discard); err != nil || got.RecordsCatchUp != 7 {
		t.Fatalf("default %d %v", got.RecordsCatchUp, err)
	}
	if got, err := Load(nil, func(k string) string { return map[string]string{"FAREBOX_RECORDS_EXPORT_CATCH_UP": "366"}[k] }, io.Discard); err != nil || got.RecordsCatchUp != 366 {
		t.Fatalf("from the environment %d %v", got.RecordsCatchUp, err)
	}
	if got, err := Load([]string{"--records-export-catch-up", "1"}, none, io.Discard); err != nil || got.RecordsCatchUp != 1 {
		t.Fatalf("flag %d %v", got.RecordsCatchUp, err)
	}
	for _, v := range []string{"0", "367", "-1", "7d", "", "٣", "99999999999999999999"} {
		if _, err := Load([]string{"--records-export-catch-up", v}, none, io.Discard); err == nil || !strings.Contains(err.Error(), "--records-export-catch-up") {
			t.Errorf("%q: %v", v, err)
		}
	}
}
