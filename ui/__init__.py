"""The app's UI layer, shared by the page files in `pages/` (which only lay out their steps).

    shell      the page list, the role (`DPX_MODE`), the sidebar, `page_setup()` for every page,
               the notice shown when the connection to the server is lost
    state      widget values across navigation, the session's work across a reload (on disk,
               named by a token in the URL), the releases a session has shown
    data       one chooser for all three tools (demo / upload / registered) -> `DataChoice`
    upload_store  uploads kept once on disk by SHA-256, within a quota and a lifetime
    housekeeping  what the app cleans once at start: killed runs' work dirs, expired uploads
    noise      the secure / reproducible-demo switch and the `Noise` a page releases with
    budget     a registered dataset's budget line, redrawn after every charge
    outcomes   what a button will charge (and the analyst's confirmation), refusals, failures
               after the charge, and the releases charged but never shown
    downloads  one download button; seeded files say so in their name and header
    location/, pp/, sql/   the steps of each tool's page that are more than a few lines

Layer: `ui` imports `core` (never `pages`); `pages` and `app.py` import `ui`.
"""
