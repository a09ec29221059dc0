module github.com/farebox/farebox

go 1.26.0
