"""Perl's POD read as perldoc shows it: titles, formatting codes, links crossref can follow."""

from __future__ import annotations

from ragplugins.pod_reader import pod_anchor, read_pod, render_codes

POD = """\
#!/usr/bin/perl
print "code before the POD is not shown\\n";

=head1 NAME
X<syntax>

perlsyn - Perl syntax

=head2 Private Variables via my()

Perl is a B<free-form> language; compare with C<< $a <=> $b >> and C<$x E<gt> 1>.
An X<JAPH acronym>clever but cryptic program. See L<perlsub/"Private Variables via my()">,
L<the tutorial|perlretut>, L</"Loops">, L<Data::Dumper> and L<https://perldoc.perl.org/>.

    my $x = C<not a code>;   # verbatim

=over 4

=item *

A bullet
over two lines.

=item $0

The program's name.

=item open FILEHANDLE,EXPR

Opens the file.

=back

=begin html

<p>Only for HTML.</p>

=end html

=for man .TH hidden

=cut

sub hidden { 1 }
"""


def test_pod_is_read_as_perldoc_shows_it():
    page = read_pod(POD)
    text = page.text
    assert text.startswith("# NAME\n\nperlsyn - Perl syntax\n\n## Private Variables via my()\n")
    assert "Perl is a free-form language; compare with `$a <=> $b` and `$x > 1`." in text
    assert "An clever but cryptic program." in text and "JAPH" not in text and "X<" not in text
    assert "    my $x = C<not a code>;   # verbatim" in text          # verbatim as written
    assert "- A bullet over two lines." in text and "\n\n$0\n\nThe program's name." in text
    for hidden in ("code before", "Only for HTML", ".TH", "sub hidden", "=over", "=item", "=cut"):
        assert hidden not in text


def test_links_name_the_page_and_section_they_point_to_and_titles_are_their_anchors():
    text = read_pod(POD).text
    assert '["Private Variables via my()" in perlsub](perlsub.pod#Private-Variables-via-my)' in text
    assert "[the tutorial](perlretut.pod)" in text and "[Loops](#Loops)" in text
    assert "[Data::Dumper](Data/Dumper.pod)" in text
    assert "[https://perldoc.perl.org/](https://perldoc.perl.org/)" in text
    page = read_pod(POD)
    assert page.text[page.anchors["Private-Variables-via-my"]:].startswith("## Private Variables via my()")
    assert page.text[page.anchors["0"]:].startswith("$0")
    assert page.anchors["open"] == page.anchors["open-FILEHANDLE-EXPR"]      # L<perlfunc/open>
    assert pod_anchor("Private Variables via my()") == "Private-Variables-via-my"


def test_escapes_and_a_text_without_pod_commands():
    assert render_codes("E<lt>E<verbar>E<sol>E<0x263A>E<233>E<eacute>Z<>") == "<|/\u263a\u00e9\u00e9"
    plain = "Just text, with C<x> but no command paragraph.\n"
    assert read_pod(plain).text == plain
