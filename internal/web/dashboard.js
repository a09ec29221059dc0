// farebox partner dashboard: copy buttons (docs/web.md "Copy buttons").
// Without this script every value stays on the page as selectable text and
// the buttons stay hidden. With it, each button copies its data-copy value,
// says "Copied" on itself for a moment and in the page's status region
// (role="status": screen readers announce it), and keeps the focus.
(function () {
  'use strict';
  var status = document.getElementById('copy-status');
  function announce(button) {
    var done = status ? status.getAttribute('data-done') : 'Copied';
    if (status) {
      status.textContent = '';
      window.setTimeout(function () { status.textContent = done; }, 50);
    }
    var label = button.firstChild;
    if (!button.dataset.label) button.dataset.label = label.nodeValue;
    label.nodeValue = done;
    window.clearTimeout(button._t);
    button._t = window.setTimeout(function () { label.nodeValue = button.dataset.label; }, 2000);
  }
  // fallback: select the value's text and copy the selection (browsers
  // without the asynchronous clipboard, or pages not on https/localhost).
  function selectAndCopy(button) {
    var value = button.parentNode.querySelector('.copy-value');
    var range = document.createRange();
    range.selectNodeContents(value);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    return ok;
  }
  function copy(button) {
    var text = button.getAttribute('data-copy');
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { announce(button); },
        function () { if (selectAndCopy(button)) announce(button); });
    } else if (selectAndCopy(button)) {
      announce(button);
    }
  }
  var buttons = document.querySelectorAll('button.copy[data-copy]');
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].hidden = false;
    buttons[i].addEventListener('click', function (ev) { copy(ev.currentTarget); });
  }
})();
