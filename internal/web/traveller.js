// farebox's traveller page (docs/web.md, "The traveller page"). The page
// works without this script: the form posts and the server answers with
// each refused field marked. With it, the form checks each field as the
// traveller types (after the field was left once, then at every key) and
// on sending, with the same words at the field (aria-live) and a summary
// that takes the focus; only the fields of the chosen identification
// option and residence are asked for; the ticket frame is as tall as the
// ticket; and a shown ticket stays available offline (ticket-sw.js).
"use strict";
(function () {
  var form = document.querySelector("form.activate");
  if (form) { checks(form); }
  var frame = document.getElementById("ticket-frame");
  if (frame) { fit(frame); keep(frame); }

  function reason(input) {
    var v = input.validity, d = form.dataset;
    if (v.valueMissing) { return input.dataset.msgRequired || d.msgRequired; }
    if (v.badInput || v.typeMismatch) { return d.msgDate; }
    if (v.patternMismatch) { return input.dataset.msgPattern || d.msgPattern; }
    if (v.tooLong) { return d.msgTooLong; }
    return "";
  }

  // show writes input's problem next to it and returns it ("" when fine).
  function show(input) {
    var msg = input.disabled ? "" : reason(input);
    var out = document.getElementById("e-" + input.id);
    if (out && out.textContent !== msg) { out.textContent = msg; }
    if (msg) { input.setAttribute("aria-invalid", "true"); } else { input.removeAttribute("aria-invalid"); }
    return msg;
  }

  // scope enables the fields of the chosen option and residence only.
  function scope() {
    var opt = form.querySelector("input[name=option]:checked") || form.querySelector("input[name=option]");
    form.querySelectorAll("[data-options]").forEach(function (f) {
      var on = !opt || f.dataset.options.split(" ").indexOf(opt.value) >= 0;
      f.hidden = !on;
      f.querySelectorAll("input").forEach(function (i) {
        i.disabled = !on;
        i.required = on && (f.dataset.requiredIn || "").split(" ").indexOf(opt.value) >= 0;
        if (!on) { show(i); }
      });
    });
    form.querySelectorAll("[data-choice-input]").forEach(function (i) {
      var chosen = form.querySelector("input[name='" + i.dataset.choiceInput + "']:checked");
      i.disabled = !!chosen && chosen.value !== "";
      i.required = !i.disabled;
      if (i.disabled) { show(i); }
    });
  }

  function checks(form) {
    form.noValidate = true; // our words, at the field, instead of the browser's bubbles
    scope();
    form.addEventListener("change", function (e) {
      if (e.target.type === "radio") { scope(); }
    });
    // Typing a postal code means "I live in Germany".
    form.querySelectorAll("[data-choice-input]").forEach(function (i) {
      i.addEventListener("focus", function () {
        var own = document.getElementById(i.id.replace(/^t-/, "c-") + "-input");
        if (own && !own.checked) { own.checked = true; scope(); }
      });
    });
    form.querySelectorAll("input[type=text], input[type=date]").forEach(function (input) {
      var touched = input.getAttribute("aria-invalid") === "true";
      input.addEventListener("blur", function () {
        if (input.value !== "") { touched = true; }
        if (touched) { show(input); }
      });
      input.addEventListener("input", function () { if (touched) { show(input); } });
    });
    form.addEventListener("submit", function (e) {
      var bad = [];
      form.querySelectorAll("input[type=text], input[type=date], input[type=radio][required]").forEach(function (input) {
        if (input.type === "radio") {
          if (!form.querySelector("input[name='" + input.name + "']:checked") && bad.indexOf(input) < 0 &&
              !bad.some(function (b) { return b.name === input.name; })) { bad.push(input); }
          return;
        }
        if (show(input)) { bad.push(input); }
      });
      if (bad.length === 0) { return; }
      e.preventDefault();
      var summary = document.getElementById("form-problems");
      var list = summary.querySelector("ul");
      list.textContent = "";
      bad.forEach(function (input) {
        var li = document.createElement("li"), a = document.createElement("a");
        a.href = "#" + input.id;
        a.textContent = (labelOf(input) + ": " + (input.type === "radio" ? form.dataset.msgChoose : reason(input)));
        li.appendChild(a);
        list.appendChild(li);
      });
      summary.hidden = false;
      summary.focus();
    });
  }

  function labelOf(input) {
    var group = input.closest("fieldset");
    if (input.type === "radio" && group) { return group.querySelector("legend").textContent.trim(); }
    var l = form.querySelector("label[for='" + input.id + "'] .name");
    return l ? l.textContent.trim() : input.name;
  }

  // fit makes the frame as tall as the ticket it shows.
  function fit(frame) {
    function size() {
      try {
        var doc = frame.contentDocument, t = doc && doc.getElementById("ticket");
        if (t && t.offsetHeight > 0) { frame.style.height = Math.ceil(t.getBoundingClientRect().height) + "px"; }
      } catch (err) { /* not ours to read: keep the stylesheet's height */ }
    }
    frame.addEventListener("load", function () { size(); setTimeout(size, 250); });
    size();
  }

  // keep stores this page and its ticket for offline use once shown; the
  // worker then refreshes them at every visit with a network.
  function keep(frame) {
    var w = document.documentElement.dataset;
    if (!("serviceWorker" in navigator) || !window.caches) { return; }
    navigator.serviceWorker.register(w.worker, { scope: w.workerScope }).then(function () {
      return navigator.serviceWorker.ready;
    }).then(function () {
      return caches.open("farebox-tickets-v1");
    }).then(function (c) {
      var urls = [location.pathname + location.search, frame.getAttribute("src"), w.script];
      return Promise.all(urls.map(function (u) {
        return c.match(u, { ignoreVary: true }).then(function (hit) { return hit || c.add(u); });
      }));
    }).then(function () { w.offline = "ready"; }, function () { w.offline = "unavailable"; });
  }
})();
