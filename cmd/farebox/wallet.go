package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/credentials"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/web"
)

// uicDevDir is where the development UIC issuer key lives.
func uicDevDir(dataDir string) string { return filepath.Join(dataDir, "keys", "uic") }

// loadUICIssuer returns the configured UIC signer, else the development
// one from the data dir (generated on first use).
func loadUICIssuer(spec, dataDir, name string) (*uic.Issuer, bool, error) {
	if spec != "" {
		iss, err := uic.LoadIssuer(spec, name)
		return iss, false, err
	}
	return uic.LoadOrCreateDevIssuer(uicDevDir(dataDir))
}

// vdvDevDir is where the development VDV PKI lives (vdv.DevDir under it).
func vdvDevDir(dataDir string) string { return filepath.Join(dataDir, "keys", "vdv") }

// vdvTrust loads the configured VDV root and CA certificates, and the
// development PKI from the data dir when present; it returns the
// development issuer (nil when none was found or create is false and
// none exists), generating it when create is true.
func vdvTrust(root, cas, dataDir string, create bool, now time.Time) (*vdv.Trust, *vdv.Issuer, bool, error) {
	var t vdv.Trust
	if root != "" {
		var files []string
		for _, f := range strings.Split(cas, ",") {
			if f = strings.TrimSpace(f); f != "" {
				files = append(files, f)
			}
		}
		if err := vdv.LoadTrust(&t, root, files, now); err != nil {
			return nil, nil, false, err
		}
	}
	if create {
		iss, created, err := vdv.LoadOrCreateDevPKI(vdvDevDir(dataDir), &t, now)
		return &t, iss, created, err
	}
	iss, err := vdv.LoadDevPKI(vdvDevDir(dataDir), &t, now)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, false, err
	}
	return &t, iss, false, nil
}

// loadVDVIssuer returns the configured VDV-KA signer, else the
// development one from the data dir (generated on first use).
func loadVDVIssuer(cfg config.Config, now time.Time) (*vdv.Issuer, bool, error) {
	t, dev, created, err := vdvTrust(cfg.VDVRoot, cfg.VDVCAs, cfg.DataDir, cfg.VDVIssuer == "", now)
	if err != nil {
		return nil, false, err
	}
	if cfg.VDVIssuer == "" {
		return dev, created, nil
	}
	iss, err := vdv.LoadIssuer(cfg.VDVIssuer, t, now)
	return iss, false, err
}

func credentialSettings(cfg config.Config) credentials.Settings {
	return credentials.Settings{DataDir: cfg.DataDir, Embedded: cfg.Embedded(), InspectionKeys: cfg.InspectionKeys,
		ApplePassCert: cfg.ApplePassCert, ApplePassKey: cfg.ApplePassKey, AppleWWDRCert: cfg.AppleWWDRCert,
		ApplePassTypeID: cfg.ApplePassTypeID, AppleTeamID: cfg.AppleTeamID,
		GoogleServiceAccount: cfg.GoogleServiceAccount, GoogleIssuerID: cfg.GoogleIssuerID,
		GoogleIssuerName: cfg.GoogleIssuerName, GoogleOrigins: cfg.GoogleOrigins, GoogleLogoURL: cfg.GoogleLogoURL, Brand: cfg.Brand,
		GoogleWalletAPI: cfg.GoogleWalletAPI, GoogleAPIURL: cfg.GoogleAPIURL, GoogleTokenURL: cfg.GoogleTokenURL}
}

// loadWallets gives d the inspection keyring and the wallet issuers,
// generating development material where nothing is configured, and says
// in the log where each came from.
func loadWallets(ctx context.Context, cfg config.Config, st *store.Store, log *slog.Logger, d *httpapi.Deps) error {
	s := credentialSettings(cfg)
	now := time.Now()
	var err error
	if d.WalletBadges, err = web.LoadBadges(cfg.WalletBadges); err != nil {
		return err
	}
	log.Info("wallet badges", "official", len(d.WalletBadges), "directory", cfg.WalletBadges)
	kr, source, created, err := credentials.LoadInspection(ctx, s, st, now, true)
	if err != nil {
		return err
	}
	var o wallets.Options
	o.Inspection = kr
	o.Brand = cfg.Brand
	switch {
	case cfg.Brand.Development:
		log.Warn("brand: passes and the rendering engine show the development brand \"farebox\"; set --brand-organization, --brand-operator, --brand-*-color, --brand-icon and --brand-logo for production")
	case cfg.Brand.Icon == nil || cfg.Brand.Logo == nil:
		log.Warn("brand: no --brand-icon or --brand-logo; passes show farebox's glyph", "organization", cfg.Brand.Organization)
	default:
		log.Info("brand loaded", "organization", cfg.Brand.Organization, "operator", cfg.Brand.Operator, "background", cfg.Brand.Background.Hex())
	}
	if created {
		log.Warn("generated inspection barcode keys", "source", source,
			"note", "configure --inspection-keys from a secret store for production; publish /v1/inspection/keys.json to inspectors")
	}
	log.Info("inspection keys loaded", "source", source, "key_ids", kr.IDs())

	b, created, err := credentials.LoadApple(s, now)
	if err != nil {
		return err
	}
	o.Apple = b
	if b.Development() {
		log.Warn("Apple Wallet: using a self-generated development certificate; passes will not install on real devices",
			"generated_now", created, "dir", s.WalletDevDir(), "advertised", cfg.AdvertiseDevelopmentWallets)
	} else {
		log.Info("Apple Wallet: pass certificate loaded", "expires", b.CertificateExpiry().UTC().Format(time.RFC3339))
		if left := time.Until(b.CertificateExpiry()); left < 30*24*time.Hour {
			log.Warn("Apple Wallet: the pass certificate expires soon; renew it", "left", left.Round(time.Hour).String())
		}
	}

	if err := loadAppleUpdates(cfg, b, log, &o); err != nil {
		return err
	}

	if s.GoogleRotatingSecret, err = credentials.LoadRotatingSecret(ctx, st, true); err != nil {
		return err
	}
	g, created, err := credentials.LoadGoogle(s)
	if err != nil {
		return err
	}
	o.Google = g
	if g.Development() {
		log.Warn("Google Wallet: using a self-generated development service account; Google rejects its save links",
			"generated_now", created, "dir", s.WalletDevDir(), "advertised", cfg.AdvertiseDevelopmentWallets)
	}
	if o.GoogleAPI, err = credentials.LoadGoogleAPI(s, g); err != nil {
		return err
	}
	if o.GoogleAPI != nil {
		log.Info("Google Wallet: objects are inserted and kept current through the REST API", "api", cfg.GoogleAPIURL)
	}
	iss, created, err := loadUICIssuer(cfg.UICIssuer, cfg.DataDir, cfg.Brand.Organization)
	if err != nil {
		return err
	}
	vi, vcreated, err := loadVDVIssuer(cfg, now)
	if err != nil {
		return err
	}
	if err := refuseDevelopmentBarcodeKeys(ctx, cfg, st, d.App.Catalog().File().Products, iss.Development, vi.Development, log); err != nil {
		return err
	}
	o.UIC = func() (*uic.Issuer, error) { return iss, nil }
	if iss.Development {
		log.Warn("UIC 918.3 barcodes: using a development key (company 9999, key 99999); its barcodes are specimens",
			"generated_now", created, "dir", uicDevDir(cfg.DataDir), "note", "set --uic-issuer RICS:KEYID:KEYFILE with the key registered with the UIC")
	} else {
		log.Info("UIC 918.3 barcodes: issuer loaded", "rics", iss.RICS, "key_id", iss.KeyID, "container_version", iss.Version)
	}
	created = vcreated
	o.VDV = func() (*vdv.Issuer, error) { return vi, nil }
	if vi.Development {
		log.Warn("VDV-KA barcodes: using a development PKI (organisation 65000, references XX FB*); its barcodes say test",
			"generated_now", created, "dir", vdvDevDir(cfg.DataDir), "note", "set --vdv-issuer ORG:PRODUCTORG:KEYFILE:CERTFILE, --vdv-root and --vdv-ca with the VDV's certificates")
	} else {
		log.Info("VDV-KA barcodes: issuer loaded", "org", vi.Org, "product_org", vi.ProductOrg, "certificate", vi.Info.CHR.String(),
			"expires", vi.Info.Expires.Format(time.DateOnly))
	}
	o.AdvertiseDevelopmentWallets = cfg.AdvertiseDevelopmentWallets
	o.DynamicWindow, o.PublicURL = cfg.DynamicWindow, cfg.PublicURL
	d.Wallets = wallets.New(store.NewView[wallets.Queries](st), clock.System{}, d.App.Ticket, o)
	d.Wallets.HandleJobs(d.App.Jobs)
	// Keys change under a running service (`farebox keys rotate`, `keys
	// revoke`, `keys prune`, a new file): every instance re-reads them.
	go every(ctx, InspectionKeyReload, func() {
		next, _, _, err := credentials.LoadInspection(ctx, s, st, time.Now(), false)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("inspection keys not reloaded; keeping the loaded ones", "error", err.Error())
			}
			return
		}
		if !slices.Equal(next.IDs(), kr.IDs()) {
			log.Info("inspection keys reloaded", "source", source, "key_ids", next.IDs())
		}
		kr = next
		d.Wallets.SetInspectionKeys(next)
	})
	return nil
}

// refuseDevelopmentBarcodeKeys stops a live service from signing live
// tickets with a development UIC or VDV key: when a product of the catalog
// uses a profile whose signer is the development one and a live API key
// exists (a partner can order live tickets), serve refuses to start unless
// --allow-development-barcode-keys says so. Such barcodes are specimens
// that no inspection device accepts, while the app shows the ticket as
// valid (docs/barcodes.md, "Development keys in live mode").
func refuseDevelopmentBarcodeKeys(ctx context.Context, cfg config.Config, st *store.Store, products []catalog.Product,
	uicDev, vdvDev bool, log *slog.Logger) error {
	var uses []string
	for _, p := range products {
		if (p.Barcode() == catalog.BarcodeUIC && uicDev) || (p.Barcode() == catalog.BarcodeVDV && vdvDev) {
			uses = append(uses, p.ID+" ("+p.Barcode()+")")
		}
	}
	if len(uses) == 0 {
		return nil
	}
	keys, err := st.Read().Keys(ctx, "")
	if err != nil {
		return err
	}
	live := 0
	for _, k := range keys {
		if k.Environment == account.Live && k.RevokedAt == nil {
			live++
		}
	}
	if live == 0 {
		return nil
	}
	slices.Sort(uses)
	if cfg.AllowDevelopmentBarcodeKeys {
		log.Warn("live tickets are signed with development barcode keys (--allow-development-barcode-keys): inspection devices reject them",
			"products", uses, "live_api_keys", live)
		return nil
	}
	return fmt.Errorf("refusing to start: %d live API key(s) can order products whose barcodes would be signed with a development key "+
		"(specimens that no inspection device accepts): %s; configure --uic-issuer / --vdv-issuer with the registered keys, "+
		"or set --allow-development-barcode-keys (FAREBOX_ALLOW_DEVELOPMENT_BARCODE_KEYS=true) for a trial",
		live, strings.Join(uses, ", "))
}

// InspectionKeyReload is how often a running service re-reads its
// inspection keys.
const InspectionKeyReload = 2 * time.Second

// loadAppleUpdates makes Apple passes updatable when --public-url is set
// (webServiceURL = public URL + "/wallet/apple") and sets the APNs client
// that pushes their updates when --apns-key is set (docs/wallet.md, "Apple
// Wallet updates").
func loadAppleUpdates(cfg config.Config, b *apple.Builder, log *slog.Logger, o *wallets.Options) error {
	o.Log = log
	if cfg.PublicURL == "" {
		log.Info("Apple Wallet updates: off (set --public-url, reachable by phones over https, to make passes updatable)")
		return nil
	}
	o.AppleWebServiceURL = cfg.PublicURL + "/wallet/apple"
	if cfg.APNsKey == "" {
		log.Warn("Apple Wallet updates: no --apns-key; passes are updatable but no device is pushed", "web_service_url", o.AppleWebServiceURL)
		return nil
	}
	key, err := apple.LoadP8(cfg.APNsKey)
	if err != nil {
		return fmt.Errorf("--apns-key: %w", err)
	}
	team := cfg.APNsTeamID
	if team == "" {
		team = b.TeamID()
	}
	c, err := apple.NewAPNs(apple.APNsConfig{Endpoint: cfg.APNsEndpoint, Key: key, KeyID: cfg.APNsKeyID, TeamID: team, Topic: b.PassTypeID()})
	if err != nil {
		return fmt.Errorf("--apns-key: %w", err)
	}
	o.Pusher = c
	log.Info("Apple Wallet updates: pushing through APNs", "endpoint", cfg.APNsEndpoint, "topic", c.Topic(), "web_service_url", o.AppleWebServiceURL)
	return nil
}
