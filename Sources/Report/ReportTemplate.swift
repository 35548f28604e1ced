/// The report's one template (swift-mustache): HTML and CSS only. `{{x}}` is escaped by
/// Mustache; the triple-brace fields are SVG the report draws from numbers (`RingGeometry`,
/// `BarChart`) or text from the vault that `BarChart.escape` escaped scalar by scalar (tracker
/// names and levels, workout types).
enum ReportTemplate {
    static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
    <title>healthvault report {{from}} to {{to}}</title>
    <style>
    body { background: #000; color: #eee; font: 15px/1.4 -apple-system, "Helvetica Neue", Arial, sans-serif; margin: 24px auto; max-width: 900px; padding: 0 16px; }
    h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid #333; padding-bottom: 4px; }
    .muted { color: #888; } .empty { color: #888; font-style: italic; }
    .latest { display: flex; gap: 24px; align-items: center; }
    .latest dl { margin: 0; } .latest dt { font-weight: 600; } .latest dd { margin: 0 0 8px; }
    .move { color: #fa114f; } .exercise { color: #92e82a; } .stand { color: #1eeaef; }
    .months { display: flex; flex-wrap: wrap; gap: 16px; }
    table.month { border-collapse: collapse; } table.month th { font-weight: 400; color: #888; font-size: 11px; }
    table.month td { width: 40px; height: 48px; text-align: center; vertical-align: top; font-size: 10px; color: #888; padding: 0; }
    table.streaks, table.trends, table.workouts { border-collapse: collapse; } td, th { padding: 4px 12px 4px 0; text-align: left; }
    .up { color: #92e82a; } .down { color: #ff8a65; } .flat { color: #888; }
    .legend i { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 10px; }
    .panels { display: grid; grid-template-columns: 1fr; gap: 4px; } svg text { fill: #aaa; font-size: 10px; }
    </style>
    </head>
    <body>
    <h1>{{title}}, {{from}} to {{to}}</h1>
    <p class="muted">Made by healthvault from {{origin}} on {{generated}}. This file fetches nothing.</p>

    <h2>Rings</h2>
    {{#latest}}
    <div class="latest">{{{svg}}}<dl><dt>{{day}}</dt><dd class="move">Move {{move}}</dd><dd class="exercise">Exercise {{exercise}}</dd><dd class="stand">Stand {{stand}}</dd></dl></div>
    {{/latest}}
    {{^latest}}<p class="empty">no ring data in this range</p>{{/latest}}
    {{#assumedGoals}}<p class="muted">{{assumedGoals}}</p>{{/assumedGoals}}

    <h2>Months</h2>
    {{^calendars}}<p class="empty">no ring data in this range</p>{{/calendars}}
    <div class="months">
    {{#calendars}}
    <table class="month"><caption>{{month}}</caption>
    <tr><th>Mo</th><th>Tu</th><th>We</th><th>Th</th><th>Fr</th><th>Sa</th><th>Su</th></tr>
    {{#weeks}}<tr>{{#days}}<td>{{^empty}}{{{svg}}}<br>{{date}}{{/empty}}</td>{{/days}}</tr>{{/weeks}}
    </table>
    {{/calendars}}
    </div>

    <h2>Streaks</h2>
    <table class="streaks"><tr><th></th><th>current</th><th>longest</th><th></th></tr>
    {{#streaks}}<tr><td>{{name}}</td><td>{{current}} days</td><td>{{longest}} days</td><td class="muted">{{longestSpan}}</td></tr>{{/streaks}}
    </table>

    <h2>Trends: the last 90 days against the last 365</h2>
    <table class="trends"><tr><th></th><th>90 days</th><th>365 days</th><th></th></tr>
    {{#trends}}<tr><td>{{name}}</td><td>{{recent}} {{unit}}</td><td>{{year}} {{unit}}</td><td class="{{direction}}">{{arrow}}</td></tr>{{/trends}}
    </table>

    {{#charts}}
    <h2>{{name}}</h2>
    <div class="panels">{{#panels}}<div><div class="muted">{{period}}</div>{{{svg}}}</div>{{/panels}}</div>
    {{/charts}}

    <h2>Sleep{{sleep.heading}}</h2>
    <p class="muted">{{sleep.span}} (hours a night) <span class="legend"><i style="background:#3a2cbf"></i>deep <i style="background:#5b8cff"></i>core <i style="background:#49c7f5"></i>REM <i style="background:#7f8cff"></i>asleep, stage unknown <i style="background:#ff8a65"></i>awake</span></p>
    {{{sleep.svg}}}

    <h2>Workouts by type</h2>
    {{{workouts.svg}}}
    <table class="workouts">{{#workouts.rows}}<tr><td>{{{type}}}</td><td>{{count}}</td><td>{{hours}} h</td></tr>{{/workouts.rows}}</table>

    <h2>Training: shares per body part and motion</h2>
    {{#training.latest}}<p>Last two weeks ({{period}}): {{sets}} sets, {{reps}} repetitions, {{workouts}} workouts, {{minutes}} min<br>
    <span class="muted">body parts: {{parts}}; motion: {{motions}}</span></p>{{/training.latest}}
    {{^training.latest}}<p class="empty">no sets or workouts in the last two weeks</p>{{/training.latest}}
    <p class="muted legend">{{{training.partLegend}}}</p>
    <div class="panels">{{#training.panels}}<div><div class="muted">{{period}}, body parts</div>{{{bodyParts}}}</div>{{/training.panels}}</div>
    <p class="muted legend">{{{training.motionLegend}}}</p>
    <div class="panels">{{#training.panels}}<div><div class="muted">{{period}}, motion</div>{{{motion}}}</div>{{/training.panels}}</div>

    <h2>Trackers</h2>
    {{#trackers}}
    <h3>{{{name}}} <span class="muted">({{{levels}}}){{#trackerStreak}}; current streak {{current}} days, longest {{longest}}{{/trackerStreak}}</span></h3>
    {{{svg}}}
    {{/trackers}}
    {{^trackers}}<p class="empty">no tracker yet</p>{{/trackers}}
    </body>
    </html>
    """#
}
