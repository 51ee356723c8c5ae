// reasonlab site pages: per-run accuracy curves and the attention explorer, drawn with the
// Plotly bundle shipped next to this file (assets/plotly.min.js). Data come from a
// <script id="data" type="application/json"> block in each page, so the pages also work when
// opened straight from disk (file://), where fetch() of a JSON file is refused.
"use strict";

function pageData() {
  return JSON.parse(document.getElementById("data").textContent);
}

// Plotly reads a subset of HTML in titles, names and hover text (<b>, <a href>, entities):
// strings from the store are shown as plain text, and %{...} in them stays literal.
function plain(s) {
  return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/%/g, "&#37;");
}

function drawCurves() {
  const data = pageData();
  const focus = decodeURIComponent(location.hash.slice(1));
  const traces = data.runs.map(r => ({
    x: r.steps, y: r.acc, name: plain(r.label), mode: "lines+markers", type: "scatter",
    opacity: !focus || focus === r.id ? 1 : 0.25,
    line: {width: focus === r.id ? 4 : 2},
    hovertemplate: plain(r.label) + " (" + plain(r.id) + ")<br>step %{x}" +
                   "<br>accuracy %{y:.4f}<extra></extra>",
  }));
  const layout = {title: {text: plain(data.title)}, xaxis: {title: {text: "step"}},
                  yaxis: {title: {text: "test accuracy"}, range: [0, 1.02]},
                  hovermode: "closest", margin: {t: 50}};
  return Plotly.newPlot("curves", traces, layout, {displaylogo: false, responsive: true})
    .then(() => document.getElementById("curves").setAttribute("data-rendered", "yes"));
}

function fillSelect(select, n, label) {
  select.innerHTML = "";
  for (let i = 0; i < n; i++) {
    const o = document.createElement("option");
    o.value = String(i);
    o.textContent = label(i);
    select.appendChild(o);
  }
}

function explorer() {
  const data = pageData();
  const sel = id => document.getElementById(id);
  const run = sel("run"), layer = sel("layer"), head = sel("head"), sentence = sel("sentence");
  fillSelect(run, data.runs.length, i => data.runs[i].label);

  function onRun() {
    const r = data.runs[+run.value];
    fillSelect(layer, r.n_layers, i => "layer " + i);
    fillSelect(head, r.n_heads, i => "head " + i);
    fillSelect(sentence, r.sentences.length, i => "sentence " + i);
    draw();
  }

  function draw() {
    const r = data.runs[+run.value], l = +layer.value, h = +head.value;
    const s = r.sentences[+sentence.value];
    const labels = s.tokens.map((t, i) => i + ":" + plain(t));
    sel("text").textContent = s.text;
    const z = s.patterns[l][h].map(row => row.map(v => v / 1000));  // stored per mille
    const peak = Math.max(0.001, ...z.map(row => Math.max(...row)));
    const trace = {z: z, x: labels, y: labels, type: "heatmap",
                   colorscale: "Viridis", zmin: 0, zmax: peak,  // scaled to the head's peak
                   hovertemplate: "query %{y} attends to key %{x}: %{z:.3f}<extra></extra>"};
    const layout = {title: {text: `layer ${l}, head ${h}`},
                    xaxis: {title: {text: "key token"}, tickangle: -60, tickfont: {size: 9}},
                    yaxis: {title: {text: "query token"}, autorange: "reversed",
                            tickfont: {size: 9}},
                    margin: {l: 90, b: 110, t: 40, r: 10}};
    const div = sel("pattern");
    div.removeAttribute("data-rendered");
    Plotly.react(div, [trace], layout, {displaylogo: false}).then(() =>
      div.setAttribute("data-rendered", `L${l}H${h}S${sentence.value}`));
    drawScores(r, l, h);
  }

  function drawScores(r, l, h) {
    const rows = [`<tr><th>score</th><th>L${l}H${h}</th><th>best head</th></tr>`];
    for (const [name, grid] of Object.entries(r.scores)) {
      let best = [0, 0];
      grid.forEach((row, i) => row.forEach((v, j) => {
        if (v > grid[best[0]][best[1]]) best = [i, j];
      }));
      rows.push(`<tr><td>${plain(name)}</td><td class="sel">${grid[l][h].toFixed(3)}</td>` +
                `<td>L${best[0]}H${best[1]} ${grid[best[0]][best[1]].toFixed(3)}</td></tr>`);
    }
    sel("scores").innerHTML = rows.join("");
  }

  run.addEventListener("change", onRun);
  [layer, head, sentence].forEach(e => e.addEventListener("change", draw));
  onRun();
}
