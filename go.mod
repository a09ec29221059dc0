module github.com/farebox/farebox

go 1.26.0

require github.com/boxesandglue/boxesandglue v0.2.14 // indirect
