/* teachgrad's stepper, stepped in the page itself (teachgrad/viz/html_view.py writes the
   HTML around it). The script's parent holds an empty, hidden div.tg-html-view and the
   frames, gzipped and base64-encoded, in a <script type="application/x-teachgrad-frames">.
   It needs DecompressionStream (Chromium 80, Firefox 113, Safari 16.4); without it the
   view stays hidden and the widget output's static text/html stays on show.
   It shows the view only where the stepper's live widget does not render: it waits a
   moment for the widget (its root carries the stepper's scope as a class; its style sheet
   hides this view too), and shows the view at once where the widget said "model not
   found" (hiding that message) or fell back to its static text (hiding that too). */
(function (script) {
  var wrap = script.parentNode;
  var view = wrap.querySelector(".tg-html-view");
  var scope = view.getAttribute("data-scope");
  var started = Date.now(), wait = parseInt(view.getAttribute("data-wait"), 10) || 0;

  function live() { return document.querySelector(".tg-stepper-widget." + scope); }
  function previousOutput() {      /* the output just before this one: the widget's */
    var child = wrap.closest(".jp-OutputArea-child, .output_area");
    return child && child.previousElementSibling;
  }
  function failed(output) {
    return output && /Error displaying widget/.test(output.textContent || "");
  }
  function frames() {
    var bytes = Uint8Array.from(atob(wrap.querySelector("script.tg-view-data").textContent
                                      .trim()), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function build(data) {
    var last = data.frames.length - 1, at = 0, timer = null;
    view.innerHTML = data.header + '<div class="tg-view-controls">' +
      '<button type="button" class="tg-view-back">\u25C0 back</button>' +
      '<button type="button" class="tg-view-play">\u25B6 play</button>' +
      '<button type="button" class="tg-view-step">step \u25B6</button>' +
      '<label>step <input type="range" class="tg-view-slider" min="0" max="' + last +
      '" value="0"></label> <span class="tg-view-at"></span></div>' +
      '<div class="tg-view-body">' + data.graph + '<div class="tg-view-frame"></div></div>';
    var q = function (c) { return view.querySelector(c); };
    var slider = q(".tg-view-slider"), play = q(".tg-view-play");
    function show(k) {
      at = Math.max(0, Math.min(last, k));
      q(".tg-view-frame").innerHTML = data.frames[at];
      slider.value = String(at);
      q(".tg-view-at").textContent = String(data.first + at);
    }
    function stop() { clearInterval(timer); timer = null; play.textContent = "\u25B6 play"; }
    q(".tg-view-back").onclick = function () { stop(); show(at - 1); };
    q(".tg-view-step").onclick = function () { stop(); show(at + 1); };
    slider.oninput = function () { stop(); show(parseInt(slider.value, 10)); };
    play.onclick = function () {
      if (timer) { stop(); return; }
      if (at === last) { show(0); }
      play.textContent = "\u275A\u275A pause";
      timer = setInterval(function () { show(at + 1); if (at >= last) { stop(); } },
                          data.interval);
    };
    /* the slider's own keys stay the slider's: the notebook (JupyterLab, Notebook 7) would
       take an arrow key to move between cells. Stopped on the way down, at the window,
       before any handler of the page's; the slider still moves (its default action). */
    window.addEventListener("keydown", function (event) {
      if (view.contains(event.target) && /^(Arrow|Home$|End$|Page)/.test(event.key)) {
        event.stopPropagation();
      }
    }, true);
    show(0);
  }

  function hideFailure(tries) {   /* the widget's "model not found" may come late */
    var output = previousOutput();
    if (failed(output)) { output.style.display = "none"; }
    else if (tries < 120) { setTimeout(function () { hideFailure(tries + 1); }, 250); }
  }

  function reveal() {
    Promise.resolve().then(frames).then(function (data) {
      if (live()) { return; }
      build(data);
      view.style.display = "";
      hideFailure(0);
      var output = previousOutput();
      if (output) {
        output.querySelectorAll(".tg-static").forEach(function (e) { e.style.display = "none"; });
      }
    }).catch(function (error) {   /* the static text/html stays on show */
      if (window.console) { console.warn("teachgrad's stepper cannot step here:", error); }
    });
  }

  (function check() {
    if (live()) { return; }
    var output = previousOutput();
    if (failed(output) || (output && output.querySelector(".tg-static")) ||
        Date.now() - started >= wait) {
      reveal();
    } else {
      setTimeout(check, 100);
    }
  })();
})(document.currentScript);
