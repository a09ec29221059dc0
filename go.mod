module github.com/farebox/farebox

go 1.26.0

require (
	github.com/boxesandglue/boxesandglue v0.2.14
	github.com/pdfcpu/pdfcpu v0.15.0
)

require (
	github.com/boxesandglue/baseline-pdf v1.1.9 // indirect
	github.com/boxesandglue/gofpdi v1.0.22 // indirect
	github.com/boxesandglue/svgreader v0.0.2 // indirect
	github.com/boxesandglue/textshape v0.0.10 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hhrutter/tiff v1.0.6 // indirect
	github.com/mattn/go-runewidth v0.0.27 // indirect
	github.com/speedata/hyphenation v1.0.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/image v0.44.0 // indirect
	golang.org/x/text v0.40.0 // indirect
)
