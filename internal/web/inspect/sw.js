// farebox inspector app's service worker (docs/inspect.md): keeps the app
// itself (page, scripts, manifest) for offline use. The keys, the
// revocation feed and the blocklist live in IndexedDB (app.js), the API is
// never cached here.
'use strict';
const CACHE = 'farebox-inspect-v1';
const APP = ['/inspect', '/inspect/app.js', '/inspect/verify.js', '/inspect/zxing.min.js', '/inspect/manifest.webmanifest', '/inspect/icon.svg'];
self.addEventListener('install', (e) => { e.waitUntil(caches.open(CACHE).then(c => c.addAll(APP)).then(() => self.skipWaiting())); });
self.addEventListener('activate', (e) => {
  e.waitUntil(caches.keys().then(ks => Promise.all(ks.filter(k => k !== CACHE).map(k => caches.delete(k)))).then(() => self.clients.claim()));
});
self.addEventListener('fetch', (e) => {
  const u = new URL(e.request.url);
  if (e.request.method !== 'GET' || u.origin !== location.origin || !(u.pathname === '/inspect' || u.pathname.startsWith('/inspect/'))) return;
  // Network first (a fresh app when online), the cache when offline.
  e.respondWith(fetch(e.request).then(r => {
    if (r.ok) { const copy = r.clone(); caches.open(CACHE).then(c => c.put(u.pathname, copy)); }
    return r;
  }).catch(() => caches.match(u.pathname).then(r => r || Response.error())));
});
