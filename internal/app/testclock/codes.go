package testclock

// The error codes of package testclock, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeInvalidFrozenTime    = "invalid_frozen_time"
	CodeInvalidTestClockName = "invalid_test_clock_name"
	CodeTestClockAdvancing   = "test_clock_advancing"
	CodeTestClockLiveMode    = "test_clock_live_mode"
)
