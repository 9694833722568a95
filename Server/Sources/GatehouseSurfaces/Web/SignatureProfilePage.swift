import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// The Sign To Login profile page "on the site" (the spec: optional fields "editable later on the
/// site"): server-rendered HTML without script, in the reader's language.
package enum SignatureProfilePage {
    package static let style = """
        body { font-family: -apple-system, system-ui, sans-serif; background: #f5f5f7; margin: 0; color: #1d1d1f; }
        main { max-width: 34rem; margin: 6vh auto; padding: 0 1rem; }
        section { background: #fff; border-radius: 12px; padding: 1.2rem 1.5rem; margin-bottom: 1.2rem; box-shadow: 0 1px 4px rgba(0,0,0,.06); }
        h1 { font-size: 1.3rem; } h2 { font-size: 1.05rem; margin-top: 0; }
        label { display: block; margin: .6rem 0 .2rem; font-size: .9rem; }
        input[type=text], input[type=email], select { width: 100%; box-sizing: border-box; padding: .5rem; border: 1px solid #ccc; border-radius: 8px; font: inherit; }
        button { font: inherit; padding: .45rem 1rem; border: 0; border-radius: 8px; background: #0a66d8; color: #fff; cursor: pointer; margin-top: .8rem; }
        button.quiet { background: #e8e8ed; color: #1d1d1f; } button.danger { background: #b3261e; }
        dl { display: grid; grid-template-columns: 9rem 1fr; gap: .3rem .8rem; margin: 0; } dt { color: #555; }
        img.photo { width: 96px; height: 96px; object-fit: cover; border-radius: 12px; }
        .error { color: #b3261e; } .done { color: #1d7a32; } .hint { color: #555; font-size: .9rem; }
        """

    package static let template: MustacheTemplate = try! MustacheTemplate(string: PageLayout.page(
        lang: "{{lang}}", title: "{{title}}", style: style, body: """
        <main>
        <h1>{{title}}</h1>
        {{#error}}<p class="error" id="error">{{error}}</p>{{/error}}
        {{#done}}<p class="done" id="done">{{done}}</p>{{/done}}
        {{#askEmail}}
        <section>
        <p class="hint">{{signInHint}}</p>
        <form method="post" action="/signature-profile/code">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="email">{{emailLabel}}</label><input id="email" type="email" name="email" value="{{email}}" autocomplete="email" required>
        <button type="submit" id="send-code">{{sendCode}}</button>
        </form>
        </section>
        {{/askEmail}}
        {{#askCode}}
        <section>
        <p class="hint" id="code-sent">{{codeSent}}</p>
        <form method="post" action="/signature-profile/sign-in">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="email" value="{{email}}">
        <label for="code">{{codeLabel}}</label><input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" required>
        <button type="submit" id="sign-in">{{signIn}}</button>
        </form>
        </section>
        {{/askCode}}
        {{#profile}}
        <section>
        <h2>{{name}}</h2>
        {{#photo}}<img class="photo" src="/signature-profile/photo" alt="">{{/photo}}
        <dl>
        <dt>{{emailLabel}}</dt><dd id="profile-email">{{email}}</dd>
        {{#place}}<dt>{{placeLabel}}</dt><dd>{{place}}</dd>{{/place}}
        <dt>{{devicesLabel}}</dt><dd>{{devices}}</dd>
        </dl>
        </section>
        <section>
        <form method="post" action="/signature-profile/save">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="phone_number">{{phoneLabel}}</label><input id="phone_number" type="text" name="phone_number" value="{{phone}}" inputmode="tel" maxlength="20" pattern="[+0-9 ()\\-]*">
        <label for="company_name">{{companyLabel}}</label><input id="company_name" type="text" name="company_name" value="{{company}}" maxlength="200">
        <label for="position">{{positionLabel}}</label><input id="position" type="text" name="position" value="{{position}}" maxlength="200">
        <label for="birthday">{{birthdayLabel}}</label><input id="birthday" type="text" name="birthday" value="{{birthday}}" placeholder="17.05.1990" maxlength="10" pattern="[0-9.]*">
        <label for="sex">{{sexLabel}}</label><select id="sex" name="sex"><option value="">—</option><option value="male"{{#male}} selected{{/male}}>{{maleLabel}}</option><option value="female"{{#female}} selected{{/female}}>{{femaleLabel}}</option></select>
        <button type="submit" id="save">{{save}}</button>
        </form>
        </section>
        <section>
        <form method="post" action="/signature-profile/photo" enctype="multipart/form-data">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="photo-file">{{photoLabel}}</label><input id="photo-file" type="file" name="photo" accept="image/png,image/jpeg,image/gif,image/webp">
        <button type="submit" id="upload">{{upload}}</button>
        {{#photo}}<button class="quiet" type="submit" name="remove" value="1" id="remove-photo">{{removePhoto}}</button>{{/photo}}
        </form>
        </section>
        <section>
        <h2>{{deleteTitle}}</h2>
        <p class="hint">{{deleteHint}}</p>
        <form method="post" action="/signature-profile/delete">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label><input type="checkbox" name="confirm" value="yes" id="confirm-delete" required> {{deleteConfirm}}</label>
        <button class="danger" type="submit" id="delete">{{deleteButton}}</button>
        </form>
        </section>
        <form method="post" action="/signature-profile/sign-out"><input type="hidden" name="csrf" value="{{csrf}}"><button class="quiet" type="submit" id="sign-out">{{signOut}}</button></form>
        {{/profile}}
        </main>
        """))

    package static let headers: HTTPFields = PageForm.headers(style: style, images: true, referrer: "no-referrer")

    package static func render(_ values: [String: Any], status: HTTPResponse.Status = .ok, cookies: [String] = []) -> Response {
        PageForm.response(template.render(values), headers: headers, status: status, cookies: cookies)
    }
}
