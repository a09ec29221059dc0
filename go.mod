module github.com/farebox/farebox

go 1.26.0

require (
	github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs v1.0.0
	google.golang.org/protobuf v1.36.12
)
