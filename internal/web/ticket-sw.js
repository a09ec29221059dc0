// farebox's ticket worker (docs/web.md, "Offline"): keeps the traveller
// pages that showed a ticket (their page, ticket frame and script, put
// into the cache by traveller.js) for use without a network. With a
// network every request goes to the server as before and refreshes a kept
// answer; without one the kept answer is shown. Nothing else is stored.
"use strict";
var CACHE = "farebox-tickets-v1";

self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (e) { e.waitUntil(self.clients.claim()); });

self.addEventListener("fetch", function (e) {
  var req = e.request;
  if (req.method !== "GET" || new URL(req.url).origin !== self.location.origin) { return; }
  e.respondWith(fetch(req).then(function (resp) {
    if (resp.ok) {
      var copy = resp.clone();
      e.waitUntil(caches.open(CACHE).then(function (c) {
        return c.match(req, { ignoreVary: true }).then(function (hit) { return hit ? c.put(req, copy) : null; });
      }));
    }
    return resp;
  }, function (err) {
    return caches.open(CACHE).then(function (c) { return c.match(req, { ignoreVary: true }); }).then(function (hit) {
      if (hit) { return hit; }
      throw err;
    });
  }));
});
