/* cuelens report: drives the cue and pairs tables, the cue explorer and the example lists, then draws the
   Plotly figures once plotly.js (the next script) has loaded. All data comes from the JSON in #report-data and is inserted with textContent
   (never innerHTML): dataset text is untrusted. */
(function () {
  "use strict";
  performance.mark("cuelens-script-start");
  var DATA = JSON.parse(document.getElementById("report-data").textContent);
  // No "share chart" button: it would upload the (dataset-derived) chart to Plotly Cloud.
  var PLOT_CONFIG = {displaylogo: false, responsive: true, showSendToCloud: false,
                     showEditInChartStudio: false,
                     modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d",
                                              "sendChartToCloud", "sendDataToCloud"]};

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  /* a cell of dataset text: its direction from its own first letter (Arabic, Hebrew read right
     to left), the table's alignment kept */
  function textCell(className, text) {
    var cell = el("td", className, text);
    cell.dir = "auto";
    return cell;
  }

  /* dataset text inside a sentence of ours, set apart (first-strong isolate … pop isolate) so a
     right-to-left word neither takes the sentence's punctuation nor reorders it */
  function isolated(text) { return "\u2068" + text + "\u2069"; }

  /* results.json numbers: +/-infinity travel as "inf"/"-inf", undefined as null */
  function num(value) {
    if (value === "inf") { return Infinity; }
    if (value === "-inf") { return -Infinity; }
    return value === null || value === undefined ? NaN : value;
  }

  /* a sortable number: undefined values sort below everything */
  function key(value) {
    var x = num(value);
    return isNaN(x) ? -Infinity : x;
  }

  function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function fmt(value, digits) {
    var x = num(value);
    if (isNaN(x)) { return "n/a"; }
    if (!isFinite(x)) { return x > 0 ? "\u221e" : "\u2212\u221e"; }
    return Number(x).toFixed(digits);
  }

  /* ------------------------------------------------------------------ figures */
  /* One figure at a time, yielding to the browser in between, so the page is readable and
     interactive at once even when a large report has many figures to draw. */
  function drawFigures() {
    var plots = Array.prototype.slice.call(document.querySelectorAll(".plot[data-figure]"));
    var first = true;
    function next() {
      var plot = plots.shift();
      if (!plot) {
        performance.mark("cuelens-figures-drawn");
        document.body.setAttribute("data-figures-drawn", "true");
        return;
      }
      var spec = DATA.figures[plot.getAttribute("data-figure")];
      if (typeof Plotly === "undefined") {  // --plotly cdn offline, or directory without the file
        plot.appendChild(el("p", "empty", "The chart needs plotly.js, which could not be loaded."));
        setTimeout(next, 0);
        return;
      }
      Plotly.newPlot(plot, spec.data, spec.layout, PLOT_CONFIG).then(function () {
        if (first) { performance.mark("cuelens-first-figure"); first = false; }
        setTimeout(next, 0);
      });
    }
    next();
  }

  /* ------------------------------------------------------------------ highlighting */
  var MAX_SHOWN = 60;  // characters of a cue shown in a list or a heading (hostile data can be long)
  var WORD_CHAR = /[\p{L}\p{M}\p{N}_]/u;  // combining marks belong to their letter's word

  var MARK = /\p{M}/u;
  var GRAPHEMES = typeof Intl !== "undefined" && Intl.Segmenter ?
    new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;

  /* the user-perceived characters of `s`: grapheme clusters (an emoji ZWJ sequence, a flag, a
     letter with its marks) where the browser has Intl.Segmenter, else code points, each with
     the combining marks that follow it */
  function graphemes(s) {
    if (GRAPHEMES) {
      return Array.from(GRAPHEMES.segment(s), function (g) { return g.segment; });
    }
    var units = [];
    Array.from(s).forEach(function (c) {
      if (units.length && MARK.test(c)) { units[units.length - 1] += c; } else { units.push(c); }
    });
    return units;
  }

  /* how many of `units`, from the first, fit in `room` code points */
  function fitting(units, room) {
    var n = 0, used = 0;
    while (n < units.length && (used += Array.from(units[n]).length) <= room) { n++; }
    return n;
  }

  /* at most MAX_SHOWN code points of `s`, cut in the middle between whole characters
     (graphemes): never inside a surrogate pair, an emoji ZWJ sequence or a flag, nor between a
     letter and its combining marks (as cuelens.data.display.short) */
  function shortText(s) {
    var text = String(s);
    if (Array.from(text).length <= MAX_SHOWN) { return text; }
    var units = graphemes(text), room = Math.ceil((MAX_SHOWN - 1) / 2);
    var head = fitting(units, room), tail = fitting(units.slice().reverse(), MAX_SHOWN - 1 - room);
    return units.slice(0, head).join("") + "\u2026" + units.slice(units.length - tail).join("");
  }

  function isWordChar(c) { return c !== undefined && c !== "" && WORD_CHAR.test(c); }

  /* [start, end) spans of `word` in `text`, case-insensitive (when lower-casing keeps lengths),
     whole words when there are any, otherwise any occurrence (e.g. "n't"). No regular
     expression is built from the word, so any word (of any length) is safe. */
  function findSpans(text, word) {
    var hay = text, needle = word;
    if (text.toLowerCase().length === text.length && word.toLowerCase().length === word.length) {
      hay = text.toLowerCase(); needle = word.toLowerCase();
    }
    var all = [], whole = [], at = hay.indexOf(needle);
    while (needle && at !== -1) {
      var span = [at, at + needle.length];
      all.push(span);
      if (!isWordChar(text.charAt(at - 1)) && !isWordChar(text.charAt(span[1]))) { whole.push(span); }
      at = hay.indexOf(needle, span[1]);
    }
    return whole.length ? whole : all;
  }

  /* Append `text` to `parent`, wrapping the occurrences of `word` (findSpans) in <mark>. Both
     in NFC, as the scan's words are (decomposed text would never contain its cue words). */
  function appendHighlighted(parent, text, word) {
    text = text.normalize("NFC");
    var last = 0, spans = word ? findSpans(text, String(word).normalize("NFC")) : [];
    spans.forEach(function (span) {
      parent.appendChild(document.createTextNode(text.slice(last, span[0])));
      parent.appendChild(el("mark", "cue", text.slice(span[0], span[1])));
      last = span[1];
    });
    parent.appendChild(document.createTextNode(text.slice(last)));
  }

  /* Whole-word search over a cue (a word or an n-gram): the query equals the cue or one of
     its words, case-insensitive; a query ending in "*" matches word prefixes. */
  function matchesWord(token, query) {
    var q = query.trim().toLowerCase();
    if (!q) { return true; }
    var t = String(token).toLowerCase(), words = t.split(/\s+/);
    if (q.charAt(q.length - 1) === "*") {
      var prefix = q.slice(0, -1);
      return t.indexOf(prefix) === 0 || words.some(function (w) { return w.indexOf(prefix) === 0; });
    }
    return t === q || words.indexOf(q) !== -1;
  }

  /* ------------------------------------------------------------------ example cards */
  function exampleCard(item, word) {
    var card = el("article", "example");
    var head = el("div", "example-head");
    head.appendChild(el("span", "badge badge-label", item.label));
    if (item.easy === true || item.easy === false) {
      head.appendChild(el("span", "badge " + (item.easy ? "badge-easy" : "badge-hard"),
                          item.easy ? "easy" : "hard"));
    }
    if (item.id !== undefined && item.id !== null && item.id !== "") {
      head.appendChild(el("span", "example-id", "id " + item.id));
    }
    card.appendChild(head);
    if (item.premise) {
      var p = el("p", "premise");
      p.appendChild(el("span", "field", DATA.examples.fields.premise));
      p.appendChild(el("bdi", null, item.premise));
      card.appendChild(p);
    }
    var t = el("p", "text"), body = el("bdi");
    t.appendChild(el("span", "field", DATA.examples.fields.text));
    appendHighlighted(body, String(item.text), word);
    t.appendChild(body);
    card.appendChild(t);
    return card;
  }

  function renderExamples(container, indices, word) {
    container.textContent = "";
    var items = DATA.examples.items;
    for (var i = 0; i < indices.length; i++) {
      var item = items[indices[i]];
      if (item) { container.appendChild(exampleCard(item, word)); }
    }
    if (!container.firstChild) { container.appendChild(el("p", "empty", "No examples.")); }
  }

  /* ------------------------------------------------------------------ cue explorer */
  var explorer = document.getElementById("explorer-cue");

  function showCue(word) {
    var indices = (DATA.examples.by_cue[word] || []).slice(0, 20);
    explorer.value = word;
    renderExamples(document.getElementById("explorer-examples"), indices, word);
    document.getElementById("explorer-count").textContent =
      indices.length + " example" + (indices.length === 1 ? "" : "s") + " containing \u201c" + isolated(shortText(word)) + "\u201d";
  }

  /* Explorer cues in the cue table's order (strongest first), each with the label it points
     to; cues that are not in the table follow in the results file's order. */
  function explorerWords() {
    var byCue = DATA.examples.by_cue, labels = {}, ranked = [];
    (DATA.cues ? DATA.cues.rows : []).forEach(function (r) {
      if (Object.prototype.hasOwnProperty.call(byCue, r[0]) &&
          !Object.prototype.hasOwnProperty.call(labels, r[0])) {
        labels[r[0]] = r[1];
        ranked.push(r[0]);
      }
    });
    var rest = Object.keys(byCue).filter(function (w) {
      return !Object.prototype.hasOwnProperty.call(labels, w);
    });
    return {words: ranked.concat(rest), labels: labels};
  }

  function initExplorer() {
    if (!explorer) { return; }
    var found = explorerWords(), words = found.words;
    for (var i = 0; i < words.length; i++) {
      var label = found.labels[words[i]] ? " \u2192 " + found.labels[words[i]] : "";
      var opt = el("option", null, isolated(shortText(words[i])) + label + " (" + DATA.examples.by_cue[words[i]].length + ")");
      opt.value = words[i];
      explorer.appendChild(opt);
    }
    explorer.addEventListener("change", function () { showCue(explorer.value); });
    if (words.length) { showCue(words[0]); }
  }

  /* ------------------------------------------------------------------ sortable tables */
  /* Clicking (or Enter on) a header with data-col sorts `order` (row indices) by value(i, col):
     numbers descending first, text A→Z first, a second click reverses; ties keep row order. */
  function sortableHeaders(table, order, value, refresh) {
    var headers = table.tHead.rows[0].cells;
    var sortCol = -1, sortDir = 1;
    for (var h = 0; h < headers.length; h++) {
      (function (th) {
        if (!th.hasAttribute("data-col")) { return; }
        th.tabIndex = 0;
        th.setAttribute("aria-sort", "none");
        var sort = function () {
          var col = Number(th.getAttribute("data-col"));
          var numeric = th.getAttribute("data-type") === "num";
          sortDir = sortCol === col ? -sortDir : (numeric ? -1 : 1);
          sortCol = col;
          order.sort(function (a, b) {
            var x = value(a, col), y = value(b, col), c;
            c = numeric ? (x < y ? -1 : x > y ? 1 : 0) : String(x).localeCompare(String(y));
            return c * sortDir || a - b;
          });
          for (var j = 0; j < headers.length; j++) { headers[j].removeAttribute("aria-sort"); }
          th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
          refresh();
        };
        th.addEventListener("click", sort);
        th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
      })(headers[h]);
    }
  }

  /* Show the rows `trs` in `order` that pass keep(row index) and say how many in `count`. */
  function showRows(body, count, trs, order, keep) {
    var frag = document.createDocumentFragment(), shown = 0;
    for (var k = 0; k < order.length; k++) {
      if (!keep(order[k])) { continue; }
      frag.appendChild(trs[order[k]]);
      shown++;
    }
    body.textContent = "";
    body.appendChild(frag);
    count.textContent = "showing " + shown + " of " + trs.length;
  }

  /* ------------------------------------------------------------------ cue table */
  function initCueTable() {
    var table = document.getElementById("cue-table");
    if (!table || !DATA.cues) { return; }
    var rows = DATA.cues.rows;  // [token, label, count, label_count, z, score, significant, explorable]
    var body = table.tBodies[0];
    var filter = document.getElementById("cue-filter");
    var label = document.getElementById("cue-label");
    var significant = document.getElementById("cue-significant");
    var count = document.getElementById("cue-count");
    var trs = rows.map(function (r) {
      var tr = el("tr");
      var word = textCell("mono token", shortText(r[0]));
      if (String(r[0]).length > MAX_SHOWN) { word.title = String(r[0]).slice(0, 1000); }
      tr.appendChild(word);
      tr.appendChild(el("td", null, r[1]));
      tr.appendChild(el("td", "num", r[2].toLocaleString("en-US")));
      tr.appendChild(el("td", "num", r[3].toLocaleString("en-US")));
      tr.appendChild(el("td", "num", fmt(r[4], 1)));
      tr.appendChild(el("td", "num", fmt(r[5], 3)));
      tr.appendChild(el("td", r[6] ? "yes" : "no", r[6] ? "yes" : "no"));
      var cell = el("td");
      if (!r[7]) { cell.className = "no"; cell.textContent = "\u2013"; cell.title = "no sampled examples"; }
      if (r[7] && explorer) {
        var button = el("button", "link", "show");
        button.type = "button";
        button.setAttribute("aria-label", "show examples for " + shortText(r[0]));
        button.addEventListener("click", function () {
          showCue(r[0]);
          document.getElementById("explorer").scrollIntoView({behavior: "smooth"});
        });
        cell.appendChild(button);
      }
      tr.appendChild(cell);
      return tr;
    });
    var order = rows.map(function (_, i) { return i; });

    function value(i, col) {
      var v = rows[i][col];
      if (col === 6) { return v ? 1 : 0; }
      return col < 2 ? v : key(v);
    }

    function refresh() {
      var q = filter.value, lab = label.value, sig = significant.checked;
      showRows(body, count, trs, order, function (i) {
        var r = rows[i];
        return matchesWord(r[0], q) && !(lab && r[1] !== lab) && !(sig && !r[6]);
      });
    }

    sortableHeaders(table, order, value, refresh);
    filter.addEventListener("input", refresh);
    label.addEventListener("change", refresh);
    significant.addEventListener("change", refresh);
    refresh();
  }

  /* ------------------------------------------------------------------ controversial pairs */
  function initPairsTable() {
    var table = document.getElementById("pairs-table");
    if (!table || !DATA.contrast_pairs) { return; }
    var columns = DATA.contrast_pairs.columns;  // [header, "text" | "num" | "int" | "bool"]
    var rows = DATA.contrast_pairs.rows;        // columns 0 and 1 are model 1 and model 2
    var body = table.tBodies[0];
    var filter = document.getElementById("pairs-filter");
    var models = document.getElementById("pairs-models");
    var count = document.getElementById("pairs-count");
    var trs = rows.map(function (r) {
      var tr = el("tr");
      r.forEach(function (v, c) {
        var type = columns[c][1];
        if (type === "num") { tr.appendChild(el("td", "num", fmt(v, 3))); }
        else if (type === "int") { tr.appendChild(el("td", "num", v === null ? "n/a" : v.toLocaleString("en-US"))); }
        else if (type === "bool") { tr.appendChild(el("td", v ? "yes" : "no", v ? "yes" : "no")); }
        else { tr.appendChild(textCell(c < 2 ? "mono" : "sentence", v === null ? "\u2013" : v)); }
      });
      return tr;
    });
    var order = rows.map(function (_, i) { return i; });

    function value(i, col) {
      var v = rows[i][col];
      if (columns[col][1] === "bool") { return v ? 1 : 0; }
      if (v === null || v === undefined) { return columns[col][1] === "text" ? "" : -Infinity; }
      return v;
    }

    function refresh() {
      var q = filter.value.trim().toLowerCase(), pair = models.value;
      showRows(body, count, trs, order, function (i) {
        var r = rows[i];
        return !(pair && r[0] + " vs " + r[1] !== pair) && !(q && !r.some(function (v, c) {
          return columns[c][1] === "text" && v !== null && String(v).toLowerCase().indexOf(q) !== -1;
        }));
      });
    }

    sortableHeaders(table, order, value, refresh);
    filter.addEventListener("input", refresh);
    models.addEventListener("change", refresh);
    refresh();
  }

  /* ------------------------------------------------------------------ easy / hard lists */
  function initEasyHard() {
    ["easy", "hard"].forEach(function (kind) {
      var box = document.getElementById(kind + "-examples");
      if (box && DATA.examples) {
        var limit = Number(box.getAttribute("data-limit")) || 10;
        renderExamples(box, (DATA.examples[kind] || []).slice(0, limit), null);
      }
    });
  }

  initExplorer();
  initCueTable();
  initPairsTable();
  initEasyHard();
  performance.mark("cuelens-ready");
  // plotly.js is the next (large) script: tables and explorer work while it loads
  document.addEventListener("DOMContentLoaded", drawFigures);
})();
