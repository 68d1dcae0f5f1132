// Switchboard registry console: refreshes the call figures and leases from /console/live.json.
// Only textContent is written: names and figures come from components and are never parsed as HTML.
(function () {
  'use strict';
  var previous = {};   // "name\u0000instance\u0000operation\u0000protocol" -> {calls, at, rate}

  function ms(micros) {
    return micros === null || micros === undefined ? '\u2013' : (micros / 1000).toFixed(2);
  }

  function ago(s) {
    s = Math.max(0, Math.round(s));
    return s < 120 ? s + ' s' : s < 7200 ? Math.floor(s / 60) + ' min' : Math.floor(s / 3600) + ' h';
  }

  function cell(tr, text, numeric) {
    var td = document.createElement('td');
    td.textContent = String(text);
    if (numeric) { td.className = 'n'; }
    tr.appendChild(td);
  }

  function findTable(name, instance) {
    var tables = document.querySelectorAll('table.live');
    for (var i = 0; i < tables.length; i++) {
      if (tables[i].getAttribute('data-name') === name && tables[i].getAttribute('data-instance') === instance) {
        return tables[i];
      }
    }
    return null;
  }

  function findLeaseCell(name, instance) {
    var sections = document.querySelectorAll('section.component');
    for (var i = 0; i < sections.length; i++) {
      if (sections[i].getAttribute('data-name') !== name) { continue; }
      var rows = sections[i].querySelectorAll('table.instances tbody tr');
      for (var j = 0; j < rows.length; j++) {
        if (rows[j].getAttribute('data-instance') === instance) { return rows[j].querySelector('td.lease'); }
      }
    }
    return null;
  }

  function show(live) {
    live.instances.forEach(function (inst) {
      var leaseCell = findLeaseCell(inst.name, inst.instanceId);
      if (leaseCell && inst.lease) {
        leaseCell.textContent = inst.lease.seconds + ' s, renewed ' + ago(inst.lease.renewedSecondsAgo) +
          ' ago, runs out in ' + ago(inst.lease.expiresInSeconds);
      }
      var table = findTable(inst.name, inst.instanceId);
      if (!table || !inst.report) { return; }
      var note = table.querySelector('caption .report');
      if (note) {
        note.textContent = 'figures from ' + ago(inst.report.receivedSecondsAgo) + ' ago, counted over ' +
          inst.report.uptimeSeconds + ' s';
      }
      var body = document.createElement('tbody');
      inst.report.rows.forEach(function (r) {
        var key = [inst.name, inst.instanceId, r.operation, r.protocol].join('\u0000');
        // calls per second between the last two reports (each renewal brings one)
        var received = Date.parse(inst.report.receivedAt);
        var before = previous[key];
        var rate = before ? before.rate : '\u2013';
        if (before && received > before.at) {
          rate = ((r.calls - before.calls) * 1000 / (received - before.at)).toFixed(1);
        }
        if (!before || received > before.at) { previous[key] = {calls: r.calls, at: received, rate: rate}; }
        var tr = document.createElement('tr');
        cell(tr, r.operation); cell(tr, r.protocol); cell(tr, r.calls, true); cell(tr, rate, true);
        cell(tr, r.faults, true); cell(tr, r.errors, true); cell(tr, r.refusals, true); cell(tr, r.repeats, true);
        cell(tr, ms(r.p50Micros), true); cell(tr, ms(r.p90Micros), true); cell(tr, ms(r.p99Micros), true);
        cell(tr, ms(r.maxMicros), true);
        body.appendChild(tr);
      });
      table.replaceChild(body, table.querySelector('tbody'));
    });
    var updated = document.getElementById('updated');
    if (updated) { updated.textContent = 'live, updated ' + live.now.replace(/\.\d+Z$/, 'Z'); }
  }

  function refresh() {
    fetch('/console/live.json', {cache: 'no-store'})
      .then(function (r) { if (!r.ok) { throw new Error('HTTP ' + r.status); } return r.json(); })
      .then(show)
      .catch(function (e) {
        var updated = document.getElementById('updated');
        if (updated) { updated.textContent = 'cannot refresh: ' + e.message; }
      });
  }

  refresh();
  setInterval(refresh, 2000);
})();
