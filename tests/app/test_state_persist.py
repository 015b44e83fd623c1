"""ui/state.py `persist`: a widget's value survives runs in which the widget is not drawn
(what Streamlit does to a page's widgets when the user visits another page and comes back)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _script():
    import streamlit as st

    from ui.state import persist

    if st.session_state.get("show", True):
        st.number_input("k", 1, 100, key=persist("k_box", 5))
        st.selectbox("pick", ["a", "b", "c"], key=persist("pick_box", "a"))
    else:
        st.write("another page")


def test_persisted_widgets_get_their_values_back_after_an_unmounted_run():
    at = AppTest.from_function(_script).run()
    assert at.number_input(key="k_box").value == 5  # the default given to persist
    at.number_input(key="k_box").set_value(42).run()
    at.selectbox(key="pick_box").set_value("c").run()
    at.session_state["show"] = False
    at.run()  # widgets not drawn: Streamlit forgets their state
    at.run()
    assert "k_box" not in at.session_state
    at.session_state["show"] = True
    at.run()
    assert not at.exception
    assert at.number_input(key="k_box").value == 42
    assert at.selectbox(key="pick_box").value == "c"


def test_without_persist_the_value_is_lost():
    """The control: the same flow with a plain key loses the value (what issue 8 reported)."""

    def plain():
        import streamlit as st

        if st.session_state.get("show", True):
            st.number_input("k", 1, 100, 5, key="k_plain")

    at = AppTest.from_function(plain).run()
    at.number_input(key="k_plain").set_value(42).run()
    at.session_state["show"] = False
    at.run()
    at.run()
    at.session_state["show"] = True
    at.run()
    assert at.number_input(key="k_plain").value == 5
