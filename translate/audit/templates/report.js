// Draws the charts of the audit report from its embedded JSON and wires
// the job table's filters. No library: the page must work offline.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);

  // el appends an SVG element; textContent keeps data out of markup.
  function el(parent, name, attrs, text) {
    var e = document.createElementNS(parent.namespaceURI, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    parent.appendChild(e);
    return e;
  }

  function short(s, n) { return s.length > n ? s.slice(0, n - 1) + "\u2026" : s; }

  function pct(n, total) { return total > 0 ? (100 * n / total).toFixed(1) + "%" : "-"; }

  // barChart draws one horizontal bar per row, each made of segments
  // {verdict, key, count}; every bar carries its counts as data attributes.
  function barChart(svg, rows, max) {
    var labelW = 240, barW = 320, valueW = 130, rowH = 28;
    var height = rows.length * rowH + 4, width = labelW + barW + valueW;
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    rows.forEach(function (row, i) {
      var y = 2 + i * rowH, g = el(svg, "g", { "class": "row" });
      el(g, "title", {}, row.title);
      el(g, "text", { x: labelW - 8, y: y + rowH / 2 + 4, "text-anchor": "end", "class": "label" }, short(row.label, 36));
      var x = labelW;
      row.segments.forEach(function (s) {
        var w = max > 0 ? s.count / max * barW : 0;
        if (s.count > 0 && w < 2) w = 2;
        var a = { x: x, y: y + 5, width: w, height: rowH - 10, "class": "bar v-" + s.key,
          "data-verdict": s.verdict, "data-count": s.count };
        if (row.option !== undefined) a["data-option"] = row.option;
        el(g, "rect", a);
        x += w;
      });
      el(g, "text", { x: x + 6, y: y + rowH / 2 + 4, "class": "value" }, row.value);
    });
  }

  function verdictChart(svg, d) {
    var max = Math.max.apply(null, d.verdicts.map(function (v) { return v.count; }).concat([0]));
    barChart(svg, d.verdicts.map(function (v) {
      var value = v.count + " (" + pct(v.count, d.total) + ")";
      return { label: v.verdict, title: v.verdict + ": " + value, value: value,
        segments: [{ verdict: v.verdict, key: v.key, count: v.count }] };
    }), max);
  }

  function optionChart(svg, d) {
    var max = Math.max.apply(null, d.options.map(function (o) { return o.refused + o.difference; }).concat([0]));
    barChart(svg, d.options.map(function (o) {
      return { label: o.option, option: o.option, value: o.refused + " refused, " + o.difference + " diff.",
        title: o.option + ": " + o.refused + " refused, " + o.difference + " with a difference",
        segments: [{ verdict: "refused", key: "refused", count: o.refused },
          { verdict: "runs with a documented difference", key: "difference", count: o.difference }] };
    }), max);
  }

  function draw(id, fn, d) {
    var svg = document.getElementById(id);
    if (svg && d) fn(svg, d);
  }
  draw("chart-verdicts", verdictChart, data);
  draw("chart-options", optionChart, data);
  draw("chart-history-verdicts", verdictChart, data.history);
  draw("chart-history-options", optionChart, data.history);

  // Job filters: a text match anywhere in the row, and a verdict.
  var table = document.getElementById("jobs");
  if (!table) return;
  var controls = document.getElementById("job-filters"), text = document.getElementById("job-filter"),
    verdict = document.getElementById("verdict-filter"), status = document.getElementById("job-count");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  function apply() {
    var q = text.value.trim().toLowerCase(), v = verdict.value, shown = 0;
    rows.forEach(function (tr) {
      var ok = (!v || tr.getAttribute("data-verdict") === v) &&
        (!q || tr.textContent.toLowerCase().indexOf(q) >= 0);
      tr.hidden = !ok;
      if (ok) shown++;
    });
    status.textContent = shown + " of " + rows.length + " jobs shown";
  }
  text.addEventListener("input", apply);
  verdict.addEventListener("change", apply);
  controls.hidden = false;
  apply();
})();
