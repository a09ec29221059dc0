module github.com/farebox/farebox

go 1.26.0

require github.com/boxesandglue/boxesandglue v0.2.14

require (
	github.com/boxesandglue/baseline-pdf v1.1.9 // indirect
	github.com/boxesandglue/gofpdi v1.0.22 // indirect
	github.com/boxesandglue/svgreader v0.0.2 // indirect
	github.com/boxesandglue/textshape v0.0.10 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/speedata/hyphenation v1.0.1 // indirect
)
