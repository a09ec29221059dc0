package credentials

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/store"
)

// InspectionStore is where the inspection keys of Settings are kept (the
// configured directory or files, the data dir, the database of Store), as
// the key use cases see it (inspection.KeyStore): LoadInspection without
// generating, RotateInspection and RemoveInspectionKey.
type InspectionStore struct {
	Settings Settings
	Store    *store.Store
}

// Load reads the stored keys; nothing is generated.
func (k InspectionStore) Load(ctx context.Context, now time.Time) (*barcode.Keyring, error) {
	kr, _, _, err := LoadInspection(ctx, k.Settings, k.Store, now, false)
	return kr, err
}

// Rotate is RotateInspection.
func (k InspectionStore) Rotate(ctx context.Context, env string, now, from time.Time) (barcode.Key, error) {
	return RotateInspection(ctx, k.Settings, k.Store, env, now, from)
}

// Remove is RemoveInspectionKey.
func (k InspectionStore) Remove(ctx context.Context, kid uint16) (bool, error) {
	return RemoveInspectionKey(ctx, k.Settings, k.Store, kid)
}
