; codelibrarian tags shared by JavaScript and TypeScript: definitions at the top of a
; file. Spliced into javascript.scm and typescript.scm where they say
; `; include _ecma_toplevel.scm` (index/languages.py `query_text`).

(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression)]) @definition.function))
(program
  (export_statement
    (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        value: [(arrow_function) (function_expression)]) @definition.function)))
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(number) (string) (template_string) (true) (false) (object) (array)]) @definition.constant))
(program
  (export_statement
    (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        value: [(number) (string) (template_string) (true) (false) (object) (array)]) @definition.constant)))

; ES5 style: `var f = function`, `res.send = function send(...)`,
; `Foo.prototype.bar = () => ...` at the top of a file
(program
  (variable_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression)]) @definition.function))
(program
  (expression_statement
    (assignment_expression
      left: (member_expression property: (property_identifier) @name)
      right: [(arrow_function) (function_expression)]) @definition.function))
