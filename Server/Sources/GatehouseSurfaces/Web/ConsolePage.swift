import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// The developer console's pages (server-rendered HTML, no script): sign in, the list of my
/// apps with their state and actions, the form to add one, and the page that shows a new key
/// once.
package enum ConsolePage {
    package static let style = """
        body { font-family: -apple-system, system-ui, sans-serif; background: #f5f5f7; margin: 0; color: #1d1d1f; }
        header { background: #fff; padding: .8rem 1.5rem; display: flex; justify-content: space-between; align-items: center; box-shadow: 0 1px 3px rgba(0,0,0,.08); }
        header h1 { font-size: 1.1rem; margin: 0; }
        main { max-width: 56rem; margin: 2rem auto; padding: 0 1rem; }
        section { background: #fff; border-radius: 12px; padding: 1.2rem 1.5rem; margin-bottom: 1.5rem; box-shadow: 0 1px 4px rgba(0,0,0,.06); }
        h2 { font-size: 1.05rem; margin-top: 0; }
        table { width: 100%; border-collapse: collapse; font-size: .92rem; }
        th, td { text-align: left; padding: .45rem .4rem; border-bottom: 1px solid #eee; vertical-align: middle; }
        td img { width: 32px; height: 32px; border-radius: 7px; }
        label { display: block; margin: .6rem 0 .2rem; font-size: .9rem; }
        input[type=text], input[type=email], input[type=url], input[type=password] { width: 100%; box-sizing: border-box; padding: .5rem; border: 1px solid #ccc; border-radius: 8px; font: inherit; }
        button { font: inherit; padding: .45rem 1rem; border: 0; border-radius: 8px; background: #0a66d8; color: #fff; cursor: pointer; margin-top: .8rem; }
        td button { margin: 0 .2rem 0 0; padding: .3rem .7rem; font-size: .85rem; }
        button.quiet { background: #e8e8ed; color: #1d1d1f; }
        form.inline { display: inline; }
        .key { font-family: ui-monospace, monospace; background: #fff8e1; padding: .6rem; border-radius: 8px; word-break: break-all; }
        .error { color: #b3261e; }
        .off { color: #b3261e; }
        .on { color: #1d7a32; }
        .hint { color: #555; font-size: .9rem; }
        """

    package static let template: MustacheTemplate = try! MustacheTemplate(string: PageLayout.page(
        lang: "en", title: "{{title}} · Sign To Login developers", style: style, body: """
        <header><h1>Sign To Login · developers</h1>{{#signedIn}}<form class="inline" method="post" action="/console/logout"><input type="hidden" name="csrf" value="{{csrf}}"><span class="hint">{{signedIn}}</span> <button class="quiet" type="submit">Sign out</button></form>{{/signedIn}}</header>
        <main>
        {{#error}}<p class="error" id="error">{{error}}</p>{{/error}}
        {{#login}}
        <section>
        <h2>Sign in</h2>
        <form method="post" action="/console/login">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="email">Email</label><input id="email" type="email" name="email" value="{{email}}" autocomplete="username" required>
        <label for="password">Password</label><input id="password" type="password" name="password" autocomplete="current-password" required>
        <button type="submit" id="signin">Sign in</button>
        </form>
        </section>
        {{/login}}
        {{#secondStep}}
        <section>
        <h2>Two-step login</h2>
        <p class="hint">Enter the code from your authenticator app, or one of your recovery codes.</p>
        <form method="post" action="/console/login">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="challenge" value="{{secondStep}}">
        <input type="hidden" name="email" value="{{email}}">
        <label for="code">Code</label><input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="20" required>
        <button type="submit" id="verify">Continue</button>
        </form>
        </section>
        {{/secondStep}}
        {{#newKey}}
        <section id="new-key">
        <h2>API key of {{newKeyApp}}</h2>
        <p>Copy it now: it is shown this once. The SDK sends it as <code>apikey</code>.</p>
        <p class="key" id="apikey">{{newKey}}</p>
        <p><a href="/console">Back to my apps</a></p>
        </section>
        {{/newKey}}
        {{#apps}}
        <section>
        <h2>My apps</h2>
        {{#hasApps}}
        <table id="apps">
        <tr><th></th><th>Name</th><th>Bundle ID</th><th>Email</th><th>Key</th><th>State</th><th></th></tr>
        {{#list}}
        <tr data-app="{{id}}">
        <td>{{#icon}}<img src="{{icon}}" alt="">{{/icon}}</td>
        <td>{{#website}}<a href="{{website}}" rel="noopener noreferrer">{{name}}</a>{{/website}}{{^website}}{{name}}{{/website}}</td>
        <td>{{bundleId}}</td><td>{{email}}</td><td><code>{{keyHint}}</code></td>
        <td class="{{stateClass}}">{{state}}</td>
        <td>
        <form class="inline" method="post" action="/console/apps/{{id}}/{{toggle}}"><input type="hidden" name="csrf" value="{{csrf}}"><button class="quiet" type="submit">{{toggleTitle}}</button></form>
        <form class="inline" method="post" action="/console/apps/{{id}}/rotate"><input type="hidden" name="csrf" value="{{csrf}}"><button class="quiet" type="submit">Rotate key</button></form>
        </td>
        </tr>
        {{/list}}
        </table>
        {{/hasApps}}
        {{^hasApps}}<p class="hint">No apps yet.</p>{{/hasApps}}
        </section>
        <section>
        <h2>Add an app</h2>
        <form method="post" action="/console/apps" enctype="multipart/form-data">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="name">Name</label><input id="name" type="text" name="name" maxlength="100" required>
        <label for="bundleId">Bundle ID</label><input id="bundleId" type="text" name="bundleId" placeholder="com.example.signer" required>
        <label for="appEmail">Responsible email</label><input id="appEmail" type="email" name="email" required>
        <label for="website">Website</label><input id="website" type="url" name="website" placeholder="https://">
        <label for="icon">Icon (PNG, JPEG or WebP)</label><input id="icon" type="file" name="icon" accept="image/png,image/jpeg,image/webp">
        <button type="submit" id="add">Add the app</button>
        </form>
        </section>
        {{/apps}}
        </main>
        """))

    /// Only the inline style, the app icons and forms posting here: no script at all.
    package static let headers = PageForm.headers(style: style, images: true, referrer: "same-origin")

    package static func render(_ values: [String: Any], status: HTTPResponse.Status = .ok, cookies: [String] = []) -> Response {
        PageForm.response(template.render(values), headers: headers, status: status, cookies: cookies)
    }
}
