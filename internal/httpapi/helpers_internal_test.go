package httpapi

import "github.com/farebox/farebox/internal/apperr"

func apperrOf(err error) *apperr.Error { return apperr.As(err) }
