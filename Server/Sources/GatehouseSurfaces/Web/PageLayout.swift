/// The one skeleton of every server-rendered page (the consoles, the confirmation, profile and history pages): the
/// doctype, the language, the viewport, the title and the page's style around its body. A page gives its parts and
/// gets the template text, Mustache tags and all, to compile.
package enum PageLayout {
    /// `lang` and `title` may be Mustache tags (`{{lang}}`); `style` is the page's CSS; `body` what goes inside
    /// `<body>`.
    package static func page(lang: String, title: String, style: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="\(lang)">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title>
        <style>\(style)</style>
        </head>
        <body>
        \(body)
        </body>
        </html>
        """
    }
}
