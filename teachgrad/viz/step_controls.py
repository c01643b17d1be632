"""The stepper widget's controls (``widget.stepper_widget`` lays them out and links them):
Play, the step slider and box, the speed slider, and the back / step / reset buttons.

Each function takes the ``ipywidgets`` module, which ``stepper_widget`` imports when a
widget is made (importing teachgrad should not pay for it).
"""

def step_controls(widgets, last, interval):
    """The Play button, the step slider, the step box and the speed slider."""
    play = widgets.Play(value=0, min=0, max=last, step=1, interval=interval,
                        show_repeat=False, tooltip="play / pause; the square goes back to step 0")
    slider = widgets.IntSlider(value=0, min=0, max=last, description="step",
                               continuous_update=True,
                               layout=widgets.Layout(width="auto", flex="1 1 240px",
                                                     min_width="200px", max_width="420px"))
    box = widgets.BoundedIntText(value=0, min=0, max=last, step=1,
                                 tooltip="its arrows step one at a time",
                                 layout=widgets.Layout(width="80px"))
    speed = widgets.IntSlider(value=interval, min=100, max=3000, step=100,
                              description="ms/step",
                              layout=widgets.Layout(width="auto", flex="0 1 260px",
                                                    min_width="180px"))
    return play, slider, box, speed


def step_buttons(widgets, play, slider, last):
    """Back, step and reset: buttons that move ``slider`` (they need a running kernel)."""
    back = widgets.Button(description="◀ back", tooltip="one step back (needs a running kernel; the slider does not)",
                          layout=widgets.Layout(width="auto", min_width="80px", flex="0 0 auto"))
    step = widgets.Button(description="step ▶", tooltip="one step on (needs a running kernel; the slider does not)",
                          layout=widgets.Layout(width="auto", min_width="80px", flex="0 0 auto"))
    reset = widgets.Button(description="reset", tooltip="back to step 0 (needs a running kernel; the Play stop button does not)",
                           layout=widgets.Layout(width="auto", min_width="80px", flex="0 0 auto"))

    def move(delta):
        slider.value = min(max(slider.value + delta, 0), last)

    def restart(_):
        play.playing = False
        slider.value = 0

    back.on_click(lambda _: move(-1))
    step.on_click(lambda _: move(1))
    reset.on_click(restart)
    return back, step, reset
